#!/usr/bin/env bash
# End-to-end: the content of a ConfigMap that a restricted NodePool names in
# spec.config (DESIGN.md 3.6). HyperShift rolls a pool when that content
# changes (docs/content/reference/nodepool-rollouts.md; the pool's config
# hash covers the ConfigMaps' data, nodepool/config.go), and no NodePool
# write carries the change for the NodePool hold to keep: the chart's
# ConfigMap entry (templates/_webhooks.tpl, hold-configmaps) sends the
# controller deletions and writes that change data or binaryData, and the
# controller refuses them while a pool naming the ConfigMap is restricted,
# saying what to do instead.
#
# NodePool np (weekend windows, Saturday 01:00) names ConfigMap tuned; the
# clock starts Saturday 00:50 (a real second is 30 simulated ones):
#   - restricted: an edit of tuned's data and its deletion are refused with
#     the message (the pool, until when, a new ConfigMap then spec.config);
#     a metadata-only write of tuned, an edit of a ConfigMap no pool names,
#     and one named only by a pool without a stanza all go through;
#   - the window opens: the same edit of tuned's data goes through.
# CM_HOLD=0 leaves the ConfigMap entry out of the webhook configuration
# (the hold broken): the refusals above fail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-07T00:50:00Z # Saturday 00:50
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=30                  # 10 simulated minutes: 20 s real
WH_NAME=hcp-e2e-cmhold-$$

webhook_scenario_begin

NS=$(new_ns cmhold)
WPORT=$(free_port)
# The chart's holds as helm renders them, the ConfigMap entry among them.
chart_webhook_config "$WPORT" "$NS" "$NS-a" >"$CTL_TMP/wh.json" || not_ok "webhook configuration from the chart"
check_eq "the chart's ConfigMap entry: UPDATE and DELETE, failurePolicy Ignore, no objectSelector" \
  "UPDATE,DELETE|Ignore|none" \
  "$(jq -r '.webhooks[] | select(.clientConfig.url | endswith("/hold/configmaps")) |
    "\(.rules[0].operations | join(","))|\(.failurePolicy)|\(.objectSelector // "none")"' "$CTL_TMP/wh.json")"
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
mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a || not_ok "HostedCluster a (no stanza)"
mk_hc "$NS" free || not_ok "HostedCluster free (no stanza)"
mk_np "$NS" np a policy=weekend || not_ok "NodePool np"
mk_np "$NS" freenp free || not_ok "NodePool freenp (no stanza)"
api PATCH "$(np_path "$NS" np)" '{"spec": {"config": [{"name": "tuned"}]}}' >/dev/null || not_ok "np names tuned"
api PATCH "$(np_path "$NS" freenp)" '{"spec": {"config": [{"name": "free-cm"}]}}' >/dev/null ||
  not_ok "freenp names free-cm"
start_ctl a "$NS" "$SIM0" "$SCALE" --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { summary; exit 1; }
sleep 2 # the API server's webhook configuration informer

# edit NAME VALUE: a merge patch of data.config; prints the answer's body.
edit() { api PATCH "$CMS/$1" "{\"data\": {\"config\": \"$2\"}}"; }
data_of() { get "$CMS/$1" .data.config; }

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
before_sim a "$OPEN" || not_ok "the checks above ran before the window"

SCENARIO=window
sleep_until_sim a "$OPEN" 1
edit tuned v2 >/dev/null
check_eq "in the window, the edit of tuned's data goes through" v2 "$(data_of tuned)"

summary
