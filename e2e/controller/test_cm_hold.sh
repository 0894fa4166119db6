#!/usr/bin/env bash
# End-to-end: the content of a ConfigMap that a restricted NodePool names in
# spec.config (DESIGN.md 3.6). HyperShift rolls a pool when that content
# changes (docs/content/reference/nodepool-rollouts.md; the pool's config
# hash covers the ConfigMaps' data, nodepool/config.go), and no NodePool
# write carries the change for the NodePool hold to keep: the controller
# keeps the opted-in label on the ConfigMaps an opted-in NodePool names
# (pkg/controller/cmlabel.c), the chart's ConfigMap entry
# (templates/_webhooks.tpl, hold-configmaps) sends it the deletions and
# content writes of those alone (objectSelector, failurePolicy Fail), and
# the controller refuses them while a pool naming the ConfigMap is
# restricted, saying what to do instead.
#
# NodePools np and np2 (weekend windows, Saturday 01:00) name ConfigMaps
# tuned, shared and missing-cm (not there), and shared; the clock starts
# Saturday 00:40 (a real second is 30 simulated ones):
#   - labels: tuned and shared get the label, one write each; other (named
#     by none) and free-cm (named by a pool without a stanza) never do; the
#     missing ConfigMap is logged once and told once in a ConfigMapNotFound
#     Event on np;
#   - restricted: an edit of tuned's data and its deletion are refused with
#     the message (the pool, until when, a new ConfigMap then spec.config);
#     a metadata-only write of tuned, an edit of a ConfigMap no pool names,
#     and one named only by a pool without a stanza all go through; np2
#     deleted, shared keeps its label (np names it);
#   - the window opens: the same edit of tuned's data goes through;
#     missing-cm created is labelled; np stops naming tuned and missing-cm:
#     their labels go, shared's stays;
#   - no replica answers (the controller stopped): an edit of shared (named,
#     labelled) is refused by failurePolicy Fail; edits of tuned (no longer
#     named) and other (never named) go through, never sent;
#   - skew, in the window: a release of HostedCluster a more than maxNodePoolSkew (3) minors
#     ahead of np is refused by every writer, naming np; 4.20 goes through.
# CM_HOLD=0 leaves the ConfigMap entry out of the webhook configuration
# (the hold broken): the refusals above fail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-07T00:40:00Z # Saturday 00:40
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=30                  # 20 simulated minutes: 40 s real
WH_NAME=hcp-e2e-cmhold-$$

webhook_scenario_begin
trap 'watch_stop; webhook_scenario_cleanup' EXIT

NS=$(new_ns cmhold)
WPORT=$(free_port)
# The chart's holds as helm renders them, the ConfigMap entry among them.
chart_webhook_config "$WPORT" "$NS" "$NS-a" >"$CTL_TMP/wh.json" || not_ok "webhook configuration from the chart"
check_eq "the chart's ConfigMap entry: UPDATE and DELETE, failurePolicy Fail, the opted-in label" \
  "UPDATE,DELETE|Fail|true" \
  "$(jq -r --arg l "$LABEL" '.webhooks[] | select(.clientConfig.url | endswith("/hold/configmaps")) |
    "\(.rules[0].operations | join(","))|\(.failurePolicy)|\(.objectSelector.matchLabels[$l] // "none")"' "$CTL_TMP/wh.json")"
if [ "${CM_HOLD:-1}" = 0 ]; then
  jq -c '.webhooks |= map(select(.clientConfig.url | endswith("/hold/configmaps") | not))' "$CTL_TMP/wh.json"
else
  cat "$CTL_TMP/wh.json"
fi | k apply -f - >/dev/null || not_ok "webhook configuration applied (its CEL compiles)"

CMS=/api/v1/namespaces/$NS/configmaps
# mk_cm NAME VALUE
mk_cm() {
  api POST "$CMS" "$(jq -nc --arg n "$1" --arg v "$2" \
    '{apiVersion: "v1", kind: "ConfigMap", metadata: {name: $n}, data: {config: $v}}')" \
    application/json >/dev/null || not_ok "ConfigMap $1"
}
mk_cm tuned v1
mk_cm other v1
mk_cm free-cm v1
mk_cm shared v1
mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a || not_ok "HostedCluster a (no stanza)"
mk_hc "$NS" free || not_ok "HostedCluster free (no stanza)"
mk_np "$NS" np a policy=weekend || not_ok "NodePool np"
mk_np "$NS" np2 a policy=weekend || not_ok "NodePool np2"
mk_np "$NS" freenp free || not_ok "NodePool freenp (no stanza)"
api PATCH "$(np_path "$NS" np)" \
  '{"spec": {"config": [{"name": "tuned"}, {"name": "shared"}, {"name": "missing-cm"}]}}' >/dev/null ||
  not_ok "np names tuned, shared and missing-cm"
api PATCH "$(np_path "$NS" np2)" '{"spec": {"config": [{"name": "shared"}]}}' >/dev/null ||
  not_ok "np2 names shared"
api PATCH "$(np_path "$NS" freenp)" '{"spec": {"config": [{"name": "free-cm"}]}}' >/dev/null ||
  not_ok "freenp names free-cm"
watch_start "$CMS" "$CTL_TMP/cm-events"
start_ctl a "$NS" "$SIM0" "$SCALE" --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { summary; exit 1; }
sleep 2 # the API server's webhook configuration informer

# edit NAME VALUE: a merge patch of data.config; prints the answer's body.
edit() { api PATCH "$CMS/$1" "{\"data\": {\"config\": \"$2\"}}"; }
data_of() { get "$CMS/$1" .data.config; }
# modified NAME: the watch's MODIFIED events of ConfigMap NAME so far.
modified() {
  jq -s --arg n "$1" 'map(select(.type == "MODIFIED" and .object.metadata.name == $n)) | length' \
    "$CTL_TMP/cm-events"
}
absent_logged() { grep -c 'does not exist.*missing-cm' "${CTL_LOG[a]}"; }

SCENARIO=labels
eventually "tuned, named by np, gets the opted-in label" true label_of "$CMS/tuned"
eventually "shared, named by np and np2, gets the opted-in label" true label_of "$CMS/shared"
now_is "other, named by no NodePool, has none" none label_of "$CMS/other"
now_is "free-cm, named by a pool without a stanza, has none" none label_of "$CMS/free-cm"
sleep 2
now_is "one write of tuned (the label), no loop" 1 modified tuned
now_is "one write of shared (the label), no loop" 1 modified shared
now_is "no write of other or free-cm" "0 0" echo "$(modified other) $(modified free-cm)"
now_is "the missing ConfigMap np names is logged once" 1 absent_logged
# absent_events: the ConfigMapNotFound Events on np that name missing-cm.
absent_events() {
  api GET "/api/v1/namespaces/$NS/events" | jq '[.items[] | select(.involvedObject.kind == "NodePool"
    and .involvedObject.name == "np" and .reason == "ConfigMapNotFound" and .type == "Warning"
    and (.message | test("names ConfigMap missing-cm, which does not exist")))] | length'
}
now_is "and told once in a Warning Event on np (ConfigMapNotFound)" 1 absent_events

SCENARIO=restricted
before_sim a "$OPEN" || not_ok "the checks below run before the window (too slow a machine)"
out=$(edit tuned v2)
check_eq "an edit of tuned's data is refused" v1 "$(data_of tuned)"
msg=$(jq -r .message <<<"$out")
echo "# $msg"
check_contains "the refusal names the NodePool and until when" \
  "ConfigMap tuned is named by spec.config of NodePool np (changes restricted until $OPEN)" "$msg"
check_contains "the refusal says what to do instead" \
  "Create a new ConfigMap with the new content and change spec.config to name it" "$msg"
out=$(api PATCH "$CMS/tuned" '{"binaryData": {"b": "AA=="}}')
check_eq "adding binaryData to tuned is refused" "" "$(get "$CMS/tuned" '.binaryData.b // ""')"
out=$(api DELETE "$CMS/tuned")
check_eq "deleting tuned is refused" v1 "$(data_of tuned)"
check_contains "the refusal of the deletion says when it may go" "Delete it in a window" \
  "$(jq -r .message <<<"$out")"
api PATCH "$CMS/tuned" '{"metadata": {"labels": {"team": "infra"}, "annotations": {"note": "x"}}}' >/dev/null
check_eq "a metadata-only write of tuned goes through" infra "$(get "$CMS/tuned" .metadata.labels.team)"
edit other v2 >/dev/null
check_eq "an edit of a ConfigMap no NodePool names goes through" v2 "$(data_of other)"
edit free-cm v2 >/dev/null
check_eq "an edit of a ConfigMap named by a pool without a stanza goes through" v2 "$(data_of free-cm)"
api DELETE "$(np_path "$NS" np2)" >/dev/null || not_ok "np2 deleted"
sleep 1
now_is "np2 deleted, shared keeps its label (np names it)" true label_of "$CMS/shared"
edit shared v2 >/dev/null
check_eq "and an edit of shared's data is refused" v1 "$(data_of shared)"
before_sim a "$OPEN" || not_ok "the checks above ran before the window"

SCENARIO=window
sleep_until_sim a "$OPEN" 1
edit tuned v2 >/dev/null
check_eq "in the window, the edit of tuned's data goes through" v2 "$(data_of tuned)"
mk_cm missing-cm v1
# HyperShift writes the pool's status once the ConfigMap it names is there
# (its ValidMachineConfig condition); any event of the pool tries again.
api PATCH "$(np_path "$NS" np)" '{"metadata": {"annotations": {"e2e/touch": "1"}}}' >/dev/null ||
  not_ok "an event of np"
eventually "missing-cm, created, gets the label at the pool's next event" true label_of "$CMS/missing-cm"
now_is "its absence was logged once" 1 absent_logged
now_is "and told once (no second Event on its retries)" 1 absent_events
api PATCH "$(np_path "$NS" np)" '{"spec": {"config": [{"name": "shared"}]}}' >/dev/null ||
  not_ok "np names only shared"
eventually "tuned, named no more, loses the label" none label_of "$CMS/tuned"
eventually "missing-cm, named no more, loses the label" none label_of "$CMS/missing-cm"
now_is "shared, still named by np, keeps it" true label_of "$CMS/shared"
w0=$(metric a hcp_controller_writes_total)
sleep 2
now_is "nothing more is written (no loop)" "$w0" metric a hcp_controller_writes_total
now_is "tuned: four writes (the label, the metadata write, the edit in the window, the label removed)" \
  4 modified tuned

SCENARIO=skew
# The guard rails' maxNodePoolSkew (default HyperShift's 3): HostedCluster
# a's NodePool np runs 4.17 (its image's tag; no HyperShift here to report
# status.version), so a release of 4.21 is refused in the write that asks
# for it, by every writer (merge patch, server-side apply, client-side
# apply, a full update), naming the pool; 4.20 goes through.
IMG421=quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64
IMG420=quay.io/openshift-release-dev/ocp-release:4.20.0-x86_64
hc_release() { get "$(hc_path "$NS" a)" .spec.release.image; }
# hc_write HOW IMAGE: writes HostedCluster a's release as HOW does; prints
# kubectl's output, fails as kubectl does.
hc_write() {
  local doc
  case $1 in
    patch) k patch hostedcluster a -n "$NS" --type merge -p "{\"spec\":{\"release\":{\"image\":\"$2\"}}}" 2>&1 ;;
    ssa) jq -nc --arg ns "$NS" --arg i "$2" '{apiVersion: "hypershift.openshift.io/v1beta1",
           kind: "HostedCluster", metadata: {name: "a", namespace: $ns}, spec: {release: {image: $i}}}' |
           k apply --server-side --force-conflicts --field-manager=ocm -f - 2>&1 ;;
    apply) doc=$(k get hostedcluster a -n "$NS" -o json | jq -c --arg i "$2" '.spec.release.image = $i |
             del(.metadata.resourceVersion, .metadata.managedFields, .status)')
           k apply -f - <<<"$doc" 2>&1 ;;
    replace) k get hostedcluster a -n "$NS" -o json | jq -c --arg i "$2" '.spec.release.image = $i' |
             k replace -f - 2>&1 ;;
  esac
}
for how in patch ssa apply replace; do
  out=$(hc_write "$how" "$IMG421")
  rc=$?
  check "$how: a release 4 minors ahead of np is refused" test "$rc" -ne 0
  check_contains "$how: the refusal names the bound and the pool" \
    "maxNodePoolSkew (3) allows: np runs 4.17.0 (4 minor versions behind)" "$out"
  now_is "$how: the release stays" "$REL0" hc_release
done
out=$(hc_write patch "$IMG420")
check "4.20, three minors ahead, goes through ($out)" test $? -eq 0
now_is "the release is 4.20" "$IMG420" hc_release

SCENARIO=outage
stop_ctl a
edit shared v3 >/dev/null
check_eq "no replica answers: an edit of shared (named, labelled) is refused (failurePolicy Fail)" v1 \
  "$(data_of shared)"
edit tuned v3 >/dev/null
check_eq "no replica answers: an edit of tuned (no longer named) goes through" v3 "$(data_of tuned)"
edit other v3 >/dev/null
check_eq "no replica answers: an edit of other (never named) goes through" v3 "$(data_of other)"
watch_stop

summary
