#!/usr/bin/env bash
# End-to-end: the admission webhooks reach opted-in objects only. The
# webhook configuration is the chart's (failurePolicy Fail, objectSelector
# on the label changemanagement.hypershift.openshift.io/opted-in=true); the
# controller keeps that label on HostedClusters with a stanza and on the
# MachineDeployments of NodePools with one (or whose HostedCluster has one),
# and takes it off when the stanza goes. The proof is on the API server's
# side: the controller counts every request it is sent, and with every
# replica down (failurePolicy Fail) a write to an object without a stanza
# still goes through, while one to an opted-in object is refused.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh (the webhook scenario helpers; no model runs)
. "$here/../model/lib.sh"

SIM0=2026-03-06T18:00:00Z # Friday: restricted
WH_NAME=hcp-e2e-scope-$$

webhook_scenario_begin

NS=$(new_ns scope)
WPORT=$(free_port)
# The chart's webhooks (templates/webhook.yaml with its default values),
# rendered by helm, pointed at this test's controller and namespaces.
chart_webhook_config "$WPORT" "$NS" "$NS-a" "$NS-free" >"$CTL_TMP/wh.json" ||
  not_ok "webhook configuration from the chart"
check_eq "the chart's webhooks select the opted-in label (the ConfigMap hold too)" \
  '["true","true","true","true","true"]' "$(jq -c "[.webhooks[].objectSelector.matchLabels[\"$LABEL\"]]" "$CTL_TMP/wh.json")"
check_eq "with failurePolicy Fail (the ConfigMap hold too)" '["Fail","Fail","Fail","Fail","Fail"]' "$(jq -c '[.webhooks[].failurePolicy]' "$CTL_TMP/wh.json")"
k apply -f "$CTL_TMP/wh.json" >/dev/null || not_ok "webhook configuration applied"

mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster a"
mk_hc "$NS" free || not_ok "HostedCluster free (no stanza)"
mk_np "$NS" np1 a policy=weekend || not_ok "NodePool np1"
mk_np "$NS" np2 a || not_ok "NodePool np2 (no stanza; its HostedCluster has one)"
mk_np "$NS" np3 free || not_ok "NodePool np3 (no stanza anywhere)"

start_ctl c "$NS" "$SIM0" 1 --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { summary; exit 1; }
# The pod's readiness probe with the webhooks on: GET /readyz on their TLS
# listener (the chart's readinessProbe), 200 once the caches are synced.
check_eq "the webhook listener's /readyz: 200 once synced" 200 \
  "$(curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "https://127.0.0.1:$WPORT/readyz")"
check "the HostedCluster with a stanza gets the label" wait_for 10 labelled "$(hc_path "$NS" a)"
check "so does its NodePool's MachineDeployment" wait_for 10 labelled "$(md_path "$NS" a np1)"
check "and that of its NodePool without a stanza (restricted by the cluster)" wait_for 10 \
  labelled "$(md_path "$NS" a np2)"
sleep 1
check_eq "the HostedCluster without a stanza: no label" none "$(label_of "$(hc_path "$NS" free)")"
check_eq "its NodePool's MachineDeployment: no label" none "$(label_of "$(md_path "$NS" free np3)")"

# The controller counts every admission request it answers.
adm_total() { metrics c | awk '/^hcp_controller_admission_requests_total\{/ { s += $2 } END { print s + 0 }'; }
a0=$(adm_total)
api PATCH "$(hc_path "$NS" free)" '{"spec":{"release":{"image":"quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64"}}}' >/dev/null ||
  not_ok "update of the HostedCluster without a stanza"
api PATCH "$(md_path "$NS" free np3)" '{"spec":{"replicas":3}}' >/dev/null || not_ok "update of its MachineDeployment"
sleep 1
check_eq "objects without a stanza are never sent to the webhook" "$a0" "$(adm_total)"
api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64"}}}' >/dev/null
api PATCH "$(md_path "$NS" a np2)" '{"spec":{"replicas":3}}' >/dev/null
sleep 1
check_eq "a scaling write to an opted-in MachineDeployment is not (matchConditions)" $((a0 + 1)) "$(adm_total)"
api PATCH "$(md_path "$NS" a np2)" '{"spec":{"template":{"spec":{"version":"4.17.1"}}}}' >/dev/null
sleep 1
a1=$(adm_total)
check_eq "its template write is (two requests in all)" $((a0 + 2)) "$a1"
check_eq "and the release is held" quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64 \
  "$(get "$(hc_path "$NS" a)" .spec.release.image)"

# Certificate rotation, as the platform does it: the caBundle trusts the
# old and the new certificate (service-ca and cert-manager add the new CA
# before they switch), then the files are replaced under the running
# controller while an opted-in release is requested every 0.2 s. The new
# certificate is served without a restart and no write is refused.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 1 -nodes \
  -subj /CN=hcp-controller-webhook-2 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$CTL_TMP/webhook2.key" -out "$CTL_TMP/webhook2.crt" 2>/dev/null
jq -c --arg ca "$(cat "$CERT" "$CTL_TMP/webhook2.crt" | base64 -w0)" \
  '.webhooks |= map(.clientConfig.caBundle = $ca)' "$CTL_TMP/wh.json" | k apply -f - >/dev/null ||
  not_ok "the caBundle with both certificates"
sleep 2
served_cn() {
  openssl s_client -connect "127.0.0.1:$WPORT" </dev/null 2>/dev/null | openssl x509 -noout -subject 2>/dev/null |
    sed 's/.*CN *= *//'
}
check_eq "before: the first certificate is served" hcp-controller-webhook "$(served_cn)"
pid0=${CTL_PID[c]}
: >"$CTL_TMP/rotation.codes"
(
  for i in $(seq 40); do
    img=quay.io/openshift-release-dev/ocp-release:4.17.$((i % 2 + 1))-x86_64
    curl -s -o /dev/null -w '%{http_code}\n' --max-time 10 --cacert "$E_CA" -X PATCH \
      -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/merge-patch+json" \
      --data-binary "{\"spec\":{\"release\":{\"image\":\"$img\"}}}" \
      "$E_SERVER$(hc_path "$NS" a)" >>"$CTL_TMP/rotation.codes"
    sleep 0.2
  done
) &
writer=$!
sleep 2
# As the kubelet updates a Secret volume: each file replaced at once.
cp "$CTL_TMP/webhook2.crt" "$CERT.new" && mv "$CERT.new" "$CERT"
cp "$CTL_TMP/webhook2.key" "$KEY.new" && mv "$KEY.new" "$KEY"
webhook_cert_renewed() { [ "$(served_cn)" = hcp-controller-webhook-2 ]; }
check "after: the new certificate is served" wait_for 15 webhook_cert_renewed
wait "$writer"
a_rot=$(adm_total)
check_eq "every write during the rotation was admitted (40 x HTTP 200)" "40 200" \
  "$(sort "$CTL_TMP/rotation.codes" | uniq -c | awk '{ printf "%s %s", $1, $2 } END { if (NR != 1) print " (" NR " codes)" }')"
check_eq "by the same controller process (no restart)" "$pid0" "${CTL_PID[c]}"
check "which is still running" kill -0 "$pid0"
check "and says it serves the renewed certificate" grep -q "serving the renewed webhook certificate" "${CTL_LOG[c]}"
echo "# figure: certificate rotation under a write every 0.2 s: $(grep -c . "$CTL_TMP/rotation.codes") writes, $(grep -vc '^200$' "$CTL_TMP/rotation.codes") refused, $((a_rot - a1)) admission requests answered"

# Every replica down: the API server refuses writes to opted-in objects only.
stop_ctl c KILL
# A replica whose caches cannot sync (its API server is a closed port):
# its listener answers, but /readyz is 503, so it is no endpoint.
sed "s|server: .*|server: https://127.0.0.1:1|" "$KCFG" >"$CTL_TMP/dead.kubeconfig"
"$HCP_BIN" run --kubeconfig "$CTL_TMP/dead.kubeconfig" --metrics-bind-address 0 \
  --health-probe-bind-address 0 --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" >"$CTL_TMP/unsynced.log" 2>&1 &
unsynced=$!
listening() { [ "$(curl -sk -o /dev/null -w '%{http_code}' --max-time 2 "https://127.0.0.1:$WPORT/readyz")" != 000 ]; }
wait_for 10 listening
check_eq "a replica whose caches have not synced: /readyz 503" 503 \
  "$(curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "https://127.0.0.1:$WPORT/readyz")"
kill "$unsynced" 2>/dev/null
wait "$unsynced" 2>/dev/null
out=$(api PATCH "$(hc_path "$NS" free)" '{"spec":{"release":{"image":"quay.io/openshift-release-dev/ocp-release:4.17.2-x86_64"}}}' 2>&1)
check_eq "every replica down: a HostedCluster without a stanza is still written" \
  quay.io/openshift-release-dev/ocp-release:4.17.2-x86_64 "$(jq -r .spec.release.image <<<"$out" 2>/dev/null)"
out=$(api PATCH "$(md_path "$NS" free np3)" '{"spec":{"replicas":4}}' 2>&1)
check_eq "and its NodePool's MachineDeployment (scaling)" 4 "$(jq -r .spec.replicas <<<"$out" 2>/dev/null)"
out=$(api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"quay.io/openshift-release-dev/ocp-release:4.17.2-x86_64"}}}' 2>&1)
check_contains "while a write to an opted-in HostedCluster is refused" "failed calling webhook" "$out"

# Opting out: the stanza goes, so does the label, but for the HostedCluster
# while a NodePool of it keeps a stanza (its fields that roll every
# NodePool are then held for that pool's windows).
start_ctl c "$NS" "$SIM0" 1 --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || not_ok "replica back"
api PATCH "$(hc_path "$NS" a)" '{"metadata":{"annotations":{"changemanagement.hypershift.openshift.io/policy":null}}}' >/dev/null ||
  not_ok "stanza removed"
unlabelled() { [ "$(label_of "$1")" = none ]; }
check "the stanza removed: np2's MachineDeployment's label goes (no stanza left above it)" \
  wait_for 10 unlabelled "$(md_path "$NS" a np2)"
check_eq "np1 keeps its own stanza, and the label" true "$(label_of "$(md_path "$NS" a np1)")"
check_eq "the HostedCluster keeps its label while np1 has a stanza" true "$(label_of "$(hc_path "$NS" a)")"
api PATCH "$(np_path "$NS" np1)" '{"metadata":{"annotations":{"changemanagement.hypershift.openshift.io/policy":null}}}' >/dev/null ||
  not_ok "np1's stanza removed"
check "np1's stanza removed too: the HostedCluster's label goes" wait_for 10 unlabelled "$(hc_path "$NS" a)"
check "and np1's MachineDeployment's" wait_for 10 unlabelled "$(md_path "$NS" a np1)"
sleep 1
w0=$(metric c hcp_controller_writes_total)
sleep 2
check_eq "steady state: no writes" "${w0%.*}" "$(m=$(metric c hcp_controller_writes_total); echo "${m%.*}")"

stop_ctl c
summary
