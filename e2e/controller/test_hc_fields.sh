#!/usr/bin/env bash
# End-to-end: the HostedCluster fields that roll every NodePool (DESIGN.md
# 3.6; HyperShift's docs/content/reference/nodepool-rollouts.md and
# nodepool/config.go) are held on the HostedCluster while it or any of its
# NodePools is restricted, and applied at the first instant all of them may
# change; beside the HyperShift behaviour model (e2e/model), which hashes
# those fields into every pool's target as config.go does, so that a change
# rolls every pool, and Cluster API's own controllers (instance "capi",
# e2e/capi/capi.mk; the clock runs 120 times real time there, so that the
# real Machines come up before the HostedCluster's window).
#
# HostedCluster a follows Saturday 01:00-05:00; pool p1 (Replace) too, pool
# p2 (InPlace) Saturday 03:00-07:00: the common window opens Saturday 03:00,
# two hours after the HostedCluster's own.
#   - Friday 23:00, a proxy and an additionalTrustBundle change: stored
#     unchanged, recorded; ChangesPending says until when;
#   - the HostedCluster's own window opens at 01:00: still held, 0 rollouts;
#   - 03:00: applied, both pools' rollouts start within 2 s (real; two
#     writes: the HostedCluster's, then each pool's), none before (p1's by
#     its new MachineSet; its first new Machine, which Cluster API makes two
#     to three seconds after the MachineSet, within START_TOL);
#   - a third pool p3 with Sunday windows (disjoint): a new proxy change is
#     held and ChangesPending (NoCommonWindow) and `explain` name p3;
#   - a PermissiveUntil override on the HostedCluster applies it, and every
#     pool rolls.
# HostedCluster b has no stanza of its own (never restricted itself); its
# pool q1 follows Saturday 03:00-07:00: b is opted in (the label the
# webhook's objectSelector reads, as the chart renders it), its proxy change
# at Friday 23:00 is held until 03:00 and applied then. HostedCluster c has
# no stanza and neither has its pool r1: no label, no write of ours but the
# ChangesPaused=False every HostedCluster is told (status), its proxy change
# goes through. Each held request applied is told in exactly one
# ChangesInitiated Event (a change of configuration shows no pending version).
# HC_FIELDS_HOLD=0 runs the controller's hold with the HostedCluster webhook
# left out (the hold broken): the checks that depend on it fail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-06T23:00:00Z   # Friday 23:00
HC_OPEN=2026-03-07T01:00:00Z # the HostedCluster's (and p1's) window, 4 h
OPEN=2026-03-07T03:00:00Z    # p2's window opens: the common window
SCALE=600                    # a real second is ten simulated minutes: 24 s to OPEN
WH_NAME=hcp-e2e-hcfields-$$
REQ=changemanagement.hypershift.openshift.io/requested-hostedcluster-spec
# Real seconds to wait for pools to settle, rollouts to start and complete,
# every pool to roll for the proxy; the bound on a Replace pool's first new
# machine.
SETTLE_WAIT=30 START_WAIT=40 ROLLED_WAIT=30 PROXY_WAIT=20 START_TOL=2

webhook_scenario_begin
# (the instance's environment, E_CAPI, is read by webhook_scenario_begin)
if [ "${E_CAPI:-}" = 1 ]; then SCALE=120 SETTLE_WAIT=60 START_WAIT=70 ROLLED_WAIT=90 PROXY_WAIT=70 START_TOL=5; fi

NS=$(new_ns hcfields)
HCP_NS=$NS-a
mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy weekend"
mk_policy "$NS" late "$(weekly_policy Saturday 03:00 4h)" || not_ok "policy late"
mk_policy "$NS" sunday "$(weekly_policy Sunday 01:00 1h)" || not_ok "policy sunday"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
mk_hc "$NS" b || not_ok "HostedCluster b (no stanza)"
mk_hc "$NS" c || not_ok "HostedCluster c (no stanza)"
HC=$(hc_path "$NS" a)
api PATCH "$HC" '{"spec": {"pullSecret": {"name": "ps1"}, "additionalTrustBundle": {"name": "tb1"},
  "configuration": {"proxy": {"httpProxy": "http://proxy-1:3128"}}}}' >/dev/null ||
  not_ok "HostedCluster configuration"
# The webhooks from here on (nobody answers them before the controller runs).
WPORT=$(free_port)
# The HostedCluster hold sees opted-in HostedClusters only, as the chart's
# objectSelector (values.yaml webhook.objectSelector) has it.
holds_webhook_config "$WPORT" "$NS" "$HCP_NS" |
  jq -c '.webhooks |= map(if .clientConfig.url | endswith("/hold/hostedclusters") then
    .objectSelector = {matchLabels: {"changemanagement.hypershift.openshift.io/opted-in": "true"}} else . end)' |
  if [ "${HC_FIELDS_HOLD:-1}" = 0 ]; then jq -c '.webhooks |= map(select(.clientConfig.url | endswith("/hold/hostedclusters") | not))'; else cat; fi |
  k apply -f - >/dev/null || not_ok "webhook configuration"
model_scenario_start a --replacement-duration 10m --workers "$HS_WORKERS"
mk_pool p1 Replace 2 weekend
mk_pool p2 InPlace 2 late
mk_pool q1 Replace 2 late b
mk_pool r1 Replace 2 "" c
HCB=$(hc_path "$NS" b) HCC=$(hc_path "$NS" c)
p1_p2_settled() { [ "$(running_machines p1)" = 2 ] && [ "$(running_machines p2)" = 2 ] && [ "$(np_get p1 .status.version)" = 4.17.0 ]; }
check "the pools run on 2 nodes each" wait_for "$SETTLE_WAIT" p1_p2_settled
check "the controller opts the HostedCluster in" wait_for 10 labelled "$HC"
check "b (no stanza; its pool q1 has one) is opted in" wait_for 10 labelled "$HCB"
# ours OBJ: our writes of OBJ other than its status conditions.
ours() { get "$1" '[.metadata.managedFields[]? | select(.manager == "hcp-controller" and .subresource != "status")] | length'; }
check_eq "c (no stanza, nor its pool r1): no label" none "$(label_of "$HCC")"
check_eq "c: no write of ours (but its status)" 0 "$(ours "$HCC")"
# rollouts POOL: rollout starts the model recorded for POOL.
rollouts() { echo $(($(model_count replacement-start "$HCP_NS/$1") + $(model_count inplace-update-start "$HCP_NS/$1"))); }
check_eq "no rollout yet" "0 0" "$(rollouts p1) $(rollouts p2)"

# ---- Friday 23:00: a proxy and a trust bundle change, held on the HostedCluster ----

SCENARIO=held
out=$(api PATCH "$HC" '{"spec": {"additionalTrustBundle": {"name": "tb2"},
  "configuration": {"proxy": {"httpProxy": "http://proxy-2:3128"}}}}')
check_eq "spec.configuration.proxy stays" http://proxy-1:3128 "$(jq -r .spec.configuration.proxy.httpProxy <<<"$out")"
check_eq "spec.additionalTrustBundle stays" tb1 "$(jq -r .spec.additionalTrustBundle.name <<<"$out")"
check_eq "the request is recorded (proxy and trust bundle)" "http://proxy-2:3128 tb2" \
  "$(jq -r --arg k "$REQ" '.metadata.annotations[$k] // "{}" | fromjson | "\(.configuration.proxy.httpProxy) \(.additionalTrustBundle.name)"' <<<"$out")"
check_eq "who asked is recorded" true \
  "$(jq '.metadata.annotations["changemanagement.hypershift.openshift.io/requested-by"] != null' <<<"$out")"
waiting() { [ "$(cond "$HC" ChangesPending reason)" = WaitingForCommonWindow ]; }
check "ChangesPending: WaitingForCommonWindow" wait_for 10 waiting
check_contains "ChangesPending names the common window's start" "held until $OPEN" \
  "$(cond "$HC" ChangesPending message)"
# b: never restricted itself, but q1 is until 03:00.
out=$(api PATCH "$HCB" '{"spec": {"configuration": {"proxy": {"httpProxy": "http://proxy-b:3128"}}}}')
check_eq "b: spec.configuration.proxy stays while q1 is restricted" none \
  "$(jq -r '.spec.configuration.proxy.httpProxy // "none"' <<<"$out")"
check_eq "b: the request is recorded" http://proxy-b:3128 \
  "$(jq -r --arg k "$REQ" '.metadata.annotations[$k] // "{}" | fromjson | .configuration.proxy.httpProxy' <<<"$out")"
b_waiting() { [ "$(cond "$HCB" ChangesPending reason)" = WaitingForCommonWindow ]; }
check "b: ChangesPending WaitingForCommonWindow" wait_for 10 b_waiting
check_contains "b: held until q1's window" "held until $OPEN" "$(cond "$HCB" ChangesPending message)"
out=$(api PATCH "$HCC" '{"spec": {"configuration": {"proxy": {"httpProxy": "http://proxy-c:3128"}}}}')
check_eq "c: the proxy change goes through" "http://proxy-c:3128 none" \
  "$(jq -r --arg k "$REQ" '"\(.spec.configuration.proxy.httpProxy) \(.metadata.annotations[$k] // "none")"' <<<"$out")"
companion() { [ "$(cm_status "$NS" hostedcluster a .heldChange.hostedClusterSpec.configuration.proxy.httpProxy)" = http://proxy-2:3128 ]; }
check "the HostedChangeManagementStatus carries the held request (heldChange.hostedClusterSpec)" wait_for 10 companion

# The HostedCluster's own window opens at 01:00, p2's is still closed.
sleep_until_sim a "$(rfc3339 $(($(epoch "$HC_OPEN") + 1800)))"
check_eq "in the HostedCluster's own window, p2 restricted: the proxy stays" http://proxy-1:3128 \
  "$(get "$HC" .spec.configuration.proxy.httpProxy)"
check_eq "0 rollouts before the common window" "0 0" "$(rollouts p1) $(rollouts p2)"
check_eq "b: the proxy stays before q1's window" none "$(get "$HCB" '.spec.configuration.proxy.httpProxy // "none"')"

# ---- 03:00: the common window opens, the request is applied, both pools roll ----

SCENARIO=window
both() { [ "$(rollouts p1)" -ge 1 ] && [ "$(rollouts p2)" -ge 1 ]; }
check "the common window opens: both pools' rollouts start" wait_for "$START_WAIT" both
# p1's rollout by its new MachineSet, then its first new Machine. Two writes
# from the boundary: the controller's HostedCluster write, then HyperShift's
# NodePool reconcile of every pool (the model's): 2 s leaves room for a
# loaded machine; the figures are the measurement.
check_rollout_starts "common window" 2 "$START_TOL" "machineset-created $HCP_NS/p1" "replacement-start $HCP_NS/p1" \
  "inplace-update-start $HCP_NS/p2"
check_eq "the request was applied and its record dropped" "http://proxy-2:3128 tb2 none" \
  "$(get "$HC" "\"\\(.spec.configuration.proxy.httpProxy) \\(.spec.additionalTrustBundle.name) \\(.metadata.annotations[\"$REQ\"] // \"none\")\"")"
b_applied() { [ "$(get "$HCB" '.spec.configuration.proxy.httpProxy // "none"')" = http://proxy-b:3128 ]; }
check "b: the held proxy is applied at q1's window" wait_for 10 b_applied
a_told() { [ "$(initiated a)" -ge 1 ] && [ "$(initiated b)" -ge 1 ]; }
check "ChangesInitiated told for the held fields applied (a, b)" wait_for 10 a_told
sleep 1
check_eq "ChangesInitiated exactly once each (a, b)" "1 1" "$(initiated a) $(initiated b)"
check_eq "c: still no label, no write of ours (but its status)" "none 0" "$(label_of "$HCC") $(ours "$HCC")"
check_eq "spec.pullSecret untouched" ps1 "$(get "$HC" .spec.pullSecret.name)"
p1_p2_rolled() { [ "$(np_get p1 .status.version)" = 4.17.0 ] && [ "$(running_machines p1)" = 2 ] && [ "$(running_machines p2)" = 2 ] &&
  [ "$(get "$(md_path "$NS" a p1)" '.status.updatedReplicas // 0')" = 2 ]; }
check "the rollouts complete" wait_for "$ROLLED_WAIT" p1_p2_rolled

# ---- p3 with Sunday windows: no common instant, said so; an override applies it ----

SCENARIO=disjoint
mk_pool p3 Replace 2 sunday
three() { [ "$(running_machines p3)" = 2 ]; }
check "p3 runs on 2 nodes" wait_for "$SETTLE_WAIT" three
before="$(rollouts p1) $(rollouts p2) $(rollouts p3)"
out=$(api PATCH "$HC" '{"spec": {"configuration": {"proxy": {"httpProxy": "http://proxy-3:3128"}}}}')
check_eq "in the HostedCluster's window, p3's disjoint: the proxy stays" http://proxy-2:3128 \
  "$(jq -r .spec.configuration.proxy.httpProxy <<<"$out")"
nocommon() { [ "$(cond "$HC" ChangesPending reason)" = NoCommonWindow ]; }
check "ChangesPending: NoCommonWindow" wait_for 10 nocommon
check_contains "ChangesPending names the pool whose windows meet none of the others'" "NodePool p3" \
  "$(cond "$HC" ChangesPending message)"
at=$(rfc3339 "$(sim_lo a | cut -d. -f1)")
expl=$("$HCP_BIN" explain --kubeconfig "$KCFG" hostedcluster "$NS/a" --at "$at" 2>&1)
check_contains "explain says no common instant exists, naming p3" "the windows of NodePool p3 meet none of" "$expl"
check_contains "explain names the held fields" "spec.configuration held" "$expl"
sleep 2
check_eq "no rollout of any pool for it" "$before" "$(rollouts p1) $(rollouts p2) $(rollouts p3)"

api PATCH "$HC" "{\"metadata\": {\"annotations\": {
  \"changemanagement.hypershift.openshift.io/strategy\": \"PermissiveUntil\",
  \"changemanagement.hypershift.openshift.io/permissive-until\": \"2026-03-09T00:00:00Z\"}}}" >/dev/null ||
  not_ok "override"
proxy_applied() { [ "$(get "$HC" .spec.configuration.proxy.httpProxy)" = http://proxy-3:3128 ]; }
check "a PermissiveUntil override applies the held proxy" wait_for 10 proxy_applied
read -r b1 b2 b3 <<<"$before"
all_rolled() { [ "$(rollouts p1)" -gt "$b1" ] && [ "$(rollouts p2)" -gt "$b2" ] && [ "$(rollouts p3)" -gt "$b3" ]; }
a_twice() { [ "$(initiated a)" -ge 2 ]; }
check "the override's application is told too" wait_for 10 a_twice
check "every pool rolls for it, p3 included (HyperShift hashes the proxy into every pool's target)" \
  wait_for "$PROXY_WAIT" all_rolled

stop_ctl a
model_stop
summary
