#!/usr/bin/env bash
# End-to-end: a NodePool release change held at the NodePool, beside
# HyperShift's OWN NodePool reconciler (HyperShift v0.1.70, imported
# unmodified by e2e/hypershift/main.go, with the release and image fakes
# HyperShift's own tests use) on the "hypershift" instance, which serves
# HyperShift's own HostedCluster and NodePool CRDs. The test plays what other
# HyperShift controllers and Cluster API would provide: the HostedCluster's
# status (ignition endpoint, kubeconfig, payload architecture, completed
# releases), the ignition server's CA Secret, the core ignition ConfigMaps,
# and the MachineDeployment's status when a rollout is done.
#
# A Replace pool on AWS, restricted on a Friday night (the window opens
# Saturday 01:00), running 4.18.0 on a control plane that completed 4.18.1:
#   - HyperShift writes its token and user-data Secrets, an AWSMachineTemplate
#     and the MachineDeployment, and reports 4.18.0 once the rollout is done;
#   - 4.18.1 is asked for: the controller holds it at the NodePool (the
#     request is recorded, spec.release stays), so HyperShift writes nothing
#     new: no token, no user data, no template, the MachineDeployment and the
#     running token's expiry untouched, and it reports no update
#     (UpdatingVersion not True); its own conditions and the controller's
#     ChangesPending live side by side in the NodePool's status;
#   - the window opens: the controller applies the request and HyperShift
#     does what it does for a new release: a new token and user data, a new
#     template, the MachineDeployment pointed at them, an expiry on the old
#     token; once Cluster API reports the rollout done it reports 4.18.1.
# NP_HOLD=0 leaves /hold/nodepools out of the webhook configuration (the hold
# broken): the held checks then fail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CTL_E2E_INSTANCE=${CTL_E2E_INSTANCE:-hypershift}
# shellcheck source=e2e/controller/lib.sh
. "$here/../controller/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

HS_BIN=${HCP_HYPERSHIFT_BIN:-$("$here/build.sh" --path)/hcp-hypershift}
SIM0=2026-03-06T23:00:00Z # Friday 23:00
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=120                 # 60 s real to the window
R0=quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64
R1=quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64
WH_NAME=hcp-e2e-hypershift-$$
REQ=changemanagement.hypershift.openshift.io/requested-nodepool-spec
POLICY_ANN=changemanagement.hypershift.openshift.io/policy
EXPIRY=hypershift.openshift.io/ignition-token-expiration-timestamp
CAPI_AWS=/apis/infrastructure.cluster.x-k8s.io/v1beta2

webhook_scenario_begin
[ -x "$HS_BIN" ] || { not_ok "HyperShift's reconciler is built" "no $HS_BIN (make e2e-hypershift-bin)"; summary; exit 1; }
HS_PID=""
hs_stop() { [ -n "$HS_PID" ] && kill -TERM "$HS_PID" 2>/dev/null && wait "$HS_PID" 2>/dev/null; HS_PID=""; }
trap 'hs_stop; webhook_scenario_cleanup' EXIT

NS=$(new_ns hs)
CP=$NS-a # HyperShift's control-plane namespace: <namespace>-<name>
k create namespace "$CP" >/dev/null && echo "$CP" >>"$CTL_NSFILE"
NP=$(np_path "$NS" np)
MD=$CAPI/namespaces/$CP/machinedeployments/np
SECRETS=/api/v1/namespaces/$CP/secrets

# ---- what other HyperShift controllers and the test provide ----------------------

post() { api POST "$1" "$2" application/json >/dev/null || not_ok "$3"; }
post "/api/v1/namespaces/$NS/secrets" "$(jq -nc '{apiVersion: "v1", kind: "Secret",
  metadata: {name: "pull-secret"}, type: "kubernetes.io/dockerconfigjson",
  data: {".dockerconfigjson": ("{\"auths\":{\"quay.io\":{\"auth\":\"ZmFrZTpmYWtl\"}}}" | @base64)}}')" "pull secret"
post "/api/v1/namespaces/$NS/secrets" "$(jq -nc '{apiVersion: "v1", kind: "Secret",
  metadata: {name: "a-admin-kubeconfig"}, data: {kubeconfig: ("apiVersion: v1\nkind: Config\n" | @base64)}}')" "admin kubeconfig Secret"
# The ignition server's CA (the control-plane operator's; any certificate).
post "$SECRETS" "$(jq -nc --arg c "$(base64 -w0 "$CERT")" '{apiVersion: "v1", kind: "Secret",
  metadata: {name: "ignition-server-ca-cert"}, data: {"tls.crt": $c}}')" "ignition server CA Secret"
# The control-plane operator's three core ignition ConfigMaps.
for i in 1 2 3; do
  post "/api/v1/namespaces/$CP/configmaps" "$(jq -nc --arg i "$i" '{apiVersion: "v1", kind: "ConfigMap",
    metadata: {name: ("core-ignition-" + $i), labels: {"hypershift.openshift.io/core-ignition-config": "true"}},
    data: {config: ("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-worker-e2e-" + $i + "\n  labels:\n    machineconfiguration.openshift.io/role: worker\nspec:\n  config:\n    ignition:\n      version: 3.2.0\n")}}')" "core ignition ConfigMap $i"
done

mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
# The HostedCluster as HyperShift's CRD wants it, its control plane at 4.18.1.
post "$HS/namespaces/$NS/hostedclusters" "$(jq -nc --arg r "$R1" --arg p "$POLICY_ANN" '{
  apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedCluster",
  metadata: {name: "a", annotations: {($p): "weekend"}},
  spec: {release: {image: $r}, pullSecret: {name: "pull-secret"}, infraID: "a-e2e",
    platform: {type: "AWS", aws: {region: "us-east-1", rolesRef: ([
      "ingressARN", "imageRegistryARN", "storageARN", "networkARN", "kubeCloudControllerARN",
      "nodePoolManagementARN", "controlPlaneOperatorARN"]
      | map({(.): ("arn:aws:iam::123456789012:role/e2e-" + .)}) | add)}},
    networking: {networkType: "OVNKubernetes", clusterNetwork: [{cidr: "10.132.0.0/14"}],
                 serviceNetwork: [{cidr: "172.31.0.0/16"}]},
    etcd: {managementType: "Managed", managed: {storage: {type: "PersistentVolume"}}},
    services: [{service: "APIServer", servicePublishingStrategy: {type: "LoadBalancer"}},
               {service: "OAuthServer", servicePublishingStrategy: {type: "Route"}},
               {service: "Konnectivity", servicePublishingStrategy: {type: "Route"}},
               {service: "Ignition", servicePublishingStrategy: {type: "Route"}}]}}')" "HostedCluster"
# Its status as the HostedCluster controller writes it: both releases completed.
api PATCH "$HS/namespaces/$NS/hostedclusters/a/status" "$(jq -nc --arg r0 "$R0" --arg r1 "$R1" '{status: {
  ignitionEndpoint: "ignition.a.e2e.local", kubeconfig: {name: "a-admin-kubeconfig"}, payloadArch: "AMD64",
  version: {desired: {image: $r1, version: "4.18.1"}, observedGeneration: 1, availableUpdates: [],
    history: [{state: "Completed", image: $r1, version: "4.18.1", startedTime: "2026-03-01T02:00:00Z",
               completionTime: "2026-03-01T03:00:00Z", verified: false},
              {state: "Completed", image: $r0, version: "4.18.0", startedTime: "2026-02-01T02:00:00Z",
               completionTime: "2026-02-01T03:00:00Z", verified: false}]}}}')" >/dev/null ||
  not_ok "HostedCluster status"

# ---- the controller, HyperShift's reconciler, the NodePool -------------------------

WPORT=$(free_port)
holds_webhook_config "$WPORT" "$NS" "$CP" |
  if [ "${NP_HOLD:-1}" = 0 ]; then jq -c '.webhooks |= map(select(.clientConfig.url | endswith("/hold/nodepools") | not))'; else cat; fi |
  k apply -f - >/dev/null || not_ok "webhook configuration"
start_ctl a "$NS" "$SIM0" "$SCALE" --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { not_ok "controller starts"; summary; exit 1; }
HS_LOG=$CTL_TMP/hypershift.log
"$HS_BIN" --kubeconfig "$KCFG" --namespace "$NS" --control-plane-namespace "$CP" \
  --release "$R0=4.18.0" --release "$R1=4.18.1" --ready-file "$CTL_TMP/hypershift.ready" \
  >"$HS_LOG" 2>&1 &
HS_PID=$!
check "HyperShift's NodePool reconciler starts" wait_for 60 test -s "$CTL_TMP/hypershift.ready"

post "$HS/namespaces/$NS/nodepools" "$(jq -nc --arg r "$R0" --arg p "$POLICY_ANN" '{
  apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
  metadata: {name: "np", annotations: {($p): "weekend"}},
  spec: {clusterName: "a", replicas: 2, arch: "amd64", release: {image: $r},
    management: {upgradeType: "Replace", replace: {strategy: "RollingUpdate",
      rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}},
    platform: {type: "AWS", aws: {instanceType: "m5.large", subnet: {id: "subnet-0123456789"}}}}}')" "NodePool"

# names PREFIX: the Secrets of the control-plane namespace named PREFIX*, sorted.
names() { api GET "$SECRETS" | jq -r --arg p "$1" '[.items[].metadata.name | select(startswith($p))] | sort | join(" ")'; }
templates() { api GET "$CAPI_AWS/namespaces/$CP/awsmachinetemplates" | jq -r '[.items[].metadata.name] | sort | join(" ")'; }
md_written() { [ -n "$(get "$MD" '.spec.template.spec.bootstrap.dataSecretName // empty')" ]; }
# hs_errors: the end of HyperShift's log and the NodePool's conditions, as comments.
hs_errors() {
  tail -8 "$HS_LOG" | cut -c1-700 | sed 's/^/#   /'
  get "$NP" '.status.conditions // [] | .[] | "#   NodePool \(.type)=\(.status) \(.reason // "") \(.message // "")"'
}
if wait_for 30 md_written; then
  ok "HyperShift writes the MachineDeployment"
else
  not_ok "HyperShift writes the MachineDeployment"
  hs_errors
  summary
  exit 1
fi
# Cluster API's MachineDeployment controller, done rolling out: status as spec.
md_done() {
  local md
  md=$(api GET "$MD") || return 1
  api PATCH "$MD/status" "$(jq -c '{status: {observedGeneration: .metadata.generation,
    replicas: .spec.replicas, updatedReplicas: .spec.replicas, readyReplicas: .spec.replicas,
    availableReplicas: .spec.replicas, unavailableReplicas: 0, phase: "Running"}}' <<<"$md")" >/dev/null
}
md_done || not_ok "MachineDeployment status (the rollout done)"
reports() { [ "$(np_get np .status.version)" = "$1" ]; }
check "HyperShift reports 4.18.0 once the rollout is done (status.version)" wait_for 30 reports 4.18.0
check "the controller opts the NodePool in" wait_for 10 np_labelled np
sleep 2 # HyperShift's reconciles of the rollout's end settle
tok0=$(names token-) ud0=$(names user-data-) tmpl0=$(templates)
gen0=$(get "$MD" .metadata.generation) ds0=$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)
echo "# HyperShift wrote: tokens [$tok0], user data [$ud0], templates [$tmpl0], MachineDeployment generation $gen0 -> $ds0"
check_eq "one token, one user-data Secret, one template" "1 1 1" \
  "$(wc -w <<<"$tok0") $(wc -w <<<"$ud0") $(wc -w <<<"$tmpl0")"
check_eq "the MachineDeployment's bootstrap is HyperShift's user data" "$ud0" "$ds0"

# ---- restricted: 4.18.1 asked for, held at the NodePool ----------------------------

SCENARIO=held
out=$(api PATCH "$NP" "{\"spec\": {\"release\": {\"image\": \"$R1\"}}}")
check_eq "spec.release.image stays" "$R0" "$(jq -r .spec.release.image <<<"$out")"
check_eq "the request is recorded" "$R1" \
  "$(jq -r --arg k "$REQ" '.metadata.annotations[$k] // "{}" | fromjson | .release.image // ""' <<<"$out")"
sleep 5 # HyperShift reconciles within a second of a NodePool change
check_eq "HyperShift writes no new token or user data" "$tok0 | $ud0" "$(names token-) | $(names user-data-)"
check_eq "HyperShift writes no new machine template" "$tmpl0" "$(templates)"
check_eq "the MachineDeployment is untouched (generation, bootstrap)" "$gen0 $ds0" \
  "$(get "$MD" .metadata.generation) $(get "$MD" .spec.template.spec.bootstrap.dataSecretName)"
check_eq "the running token carries no expiry" "-" \
  "$(get "$SECRETS/$tok0" ".metadata.annotations[\"$EXPIRY\"] // \"-\"")"
check_eq "HyperShift reports the release that runs (status.version)" 4.18.0 "$(np_get np .status.version)"
check_eq "HyperShift reports no update (UpdatingVersion)" False "$(cond "$NP" UpdatingVersion status)"
check_eq "HyperShift's own conditions stay beside the controller's (ValidReleaseImage)" True \
  "$(cond "$NP" ValidReleaseImage status)"
check_contains "the controller's ChangesPending names the held change" "The held change (release $R1)" \
  "$(cond "$NP" ChangesPending message)"
check_eq "no ChangesInitiated before the window" 0 "$(initiated np)"

# ---- the window opens: the request is applied, HyperShift rolls it out ----------------

SCENARIO=window
rolled_out() { [ "$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)" != "$ds0" ]; }
check "the window opens: HyperShift points the MachineDeployment at new user data" wait_for 90 rolled_out
rolled_out || grep -E 'warn|error' "${CTL_LOG[a]}" | tail -5 | cut -c1-700 | sed 's/^/#   controller: /'
# The boundary's real instant on the controller's clock.
b=$(awk -v t0="${CTL_T0[a]}" -v s="$(epoch "$SIM0")" -v o="$(epoch "$OPEN")" -v k="${CTL_SCALE[a]}" \
  'BEGIN { printf "%.3f", t0 / 1e6 + (o - s) / k }')
lag=$(awk -v n="$(now_us)" -v b="$b" 'BEGIN { printf "%.3f", n / 1e6 - b }')
echo "# figure: window open -> HyperShift's MachineDeployment update seen: $lag s real (polled every 0.2 s; load average $(cut -d' ' -f1 /proc/loadavg))"
in_range "HyperShift rolls within 2 s (real) of the window opening, not before" "$lag" 0 2
check_eq "the request was applied" "$R1" "$(np_get np .spec.release.image)"
tok1=$(names token-) ud1=$(names user-data-)
ds1=$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)
check_eq "HyperShift made a new token beside the old one" 2 "$(wc -w <<<"$tok1")"
check "the MachineDeployment's bootstrap is the new user data" eval '[[ " $ud1 " == *" $ds1 "* ]]'
check_eq "the MachineDeployment runs 4.18.1" 4.18.1 "$(get "$MD" .spec.template.spec.version)"
check "HyperShift writes a new machine template (the new release's image)" \
  wait_for 10 eval '[ "$(templates)" != "$tmpl0" ]'
expiring() { [ "$(get "$SECRETS/$tok0" ".metadata.annotations[\"$EXPIRY\"] // \"-\"")" != - ]; }
check "HyperShift sets an expiry on the old token" wait_for 10 expiring
check_eq "HyperShift reports the update (UpdatingVersion)" True "$(cond "$NP" UpdatingVersion status)"
check_eq "HyperShift still reports 4.18.0 while the machines roll" 4.18.0 "$(np_get np .status.version)"
md_done || not_ok "MachineDeployment status (the rollout done)"
check "HyperShift reports 4.18.1 once the rollout is done" wait_for 30 reports 4.18.1
check "ChangesInitiated told for the held change" wait_for 10 eval '[ "$(initiated np)" -ge 1 ]'
sleep 2 # a second Event would be written by now
check_eq "ChangesInitiated exactly once" 1 "$(initiated np)"
# HyperShift's errors: a write that met one of the controller's (the
# opted-in label on a new NodePool, say) is refused with a conflict and
# tried again, as any two writers of one object; anything else is a failure.
errors=$(grep '"level":"error"' "$HS_LOG" | jq -r '"\(.msg): \(.error // "")"' 2>/dev/null)
[ -z "$errors" ] || cut -c1-300 <<<"$errors" | sed 's/^/# HyperShift error: /'
conflicts=$(grep -c 'the object has been modified' <<<"$errors")
echo "# figure: HyperShift's writes refused with a conflict and tried again: $conflicts"
check_eq "HyperShift's reconciler logged no error but conflicts" 0 \
  "$(grep -v '^$' <<<"$errors" | grep -vc 'the object has been modified')"
check "no write fight: at most 3 of HyperShift's writes met the controller's" [ "$conflicts" -le 3 ]

hs_stop
stop_ctl a
summary
