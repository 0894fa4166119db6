#!/usr/bin/env bash
# End-to-end: NodePool changes held at the NodePool (DESIGN.md 3.6) leave
# HyperShift's own state true, beside the HyperShift / Cluster API behaviour
# model (e2e/model), which keeps HyperShift's ignition tokens and user-data
# Secrets per target (nodepool/token.go: a new target expires the old token
# after --token-ttl, standing in for 2 h, and deletes the old user data) and
# NodePool status as capi.go does; a machine whose user data or token is
# gone never becomes a node (the model records bootstrap-failed).
#
# A Replace pool (rp) and an InPlace pool (ip), 3 machines each, restricted
# on a Friday evening (the window opens Saturday 01:00), are asked for
# 4.17.1 and held for longer than the token TTL:
#   - the NodePools' spec.release stays, the request is recorded;
#   - status.version stays 4.17.0, the running template's user-data Secret
#     exists and its token carries no expiry (HyperShift saw no new target);
#   - a scale 3 -> 5 and a remediation give machines that become nodes (no
#     bootstrap failure), and status.replicas follows the scale;
#   - the window opens: each rollout starts within 1 s (real) of the
#     boundary (rp: its new MachineSet), none before, and completes;
#     status.version becomes 4.17.1.
# A third Replace pool (cf) is asked for a spec.config change alone (no
# release): held the same way, applied at the window, rolled. Each held
# change let through is told in exactly one ChangesInitiated Event (the
# releases of rp and ip, and cf's configuration, which never shows as a
# pending version).
# NP_HOLD=0 leaves /hold/nodepools out of the webhook configuration (the
# hold broken): the checks above that depend on it fail.
# Beside Cluster API's own controllers (instance "capi", e2e/capi/capi.mk)
# the machines are real Machines: the clock runs 120 times real time from
# 20:45 (127 s real to the window), so that they come up, scale and are
# remediated (rp has autoRepair: HyperShift's MachineHealthCheck) before the
# window, on a machine loaded by the other lanes too. There a Replace
# rollout's new MachineSet comes within 1 s of the window, like the model's,
# and its first new Machine two to three seconds after it (Cluster API's
# MachineSet controller): START_TOL bounds that one.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-06T18:00:00Z # Friday 18:00
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=600                 # a real second is ten simulated minutes: 42 s to the window
WH_NAME=hcp-e2e-nphold-$$
REQ=changemanagement.hypershift.openshift.io/requested-nodepool-spec
# Real seconds to wait for machines to settle, to scale, to be remediated,
# for the rollouts to start and to complete; the Replace start's bound.
SETTLE_WAIT=30 SCALE_WAIT=10 REMEDIATE_WAIT=10 START_WAIT=60 ROLLED_WAIT=40 START_TOL=1

webhook_scenario_begin
# (the instance's environment, E_CAPI, is read by webhook_scenario_begin)
if [ "${E_CAPI:-}" = 1 ]; then
  SIM0=2026-03-06T20:45:00Z SCALE=120 # 127 s to the window
  SETTLE_WAIT=60 SCALE_WAIT=40 REMEDIATE_WAIT=60 START_WAIT=110 ROLLED_WAIT=110 START_TOL=4
fi
TTL=$((3 * SCALE / 60))m # the model's token TTL (simulated): 3 s real

NS=$(new_ns nphold)
HCP_NS=$NS-a
WPORT=$(free_port)
holds_webhook_config "$WPORT" "$NS" "$HCP_NS" |
  if [ "${NP_HOLD:-1}" = 0 ]; then jq -c '.webhooks |= map(select(.clientConfig.url | endswith("/hold/nodepools") | not))'; else cat; fi |
  k apply -f - >/dev/null || not_ok "webhook configuration"
mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
# The pools' requests here are about windows: the control plane has
# completed the releases they ask for (hc_completed).
hc_completed "$NS" a "$REL1" || not_ok "HostedCluster history"
model_scenario_start a --replacement-duration 10m --token-ttl "$TTL" --workers "$HS_WORKERS"
mk_pool rp Replace 3 weekend a true
mk_pool ip InPlace 3
mk_pool cf Replace 3
MD=$CAPI/namespaces/$HCP_NS/machinedeployments/rp
MS=$CAPI/namespaces/$HCP_NS/machinesets/ip
CMS=/api/v1/namespaces/$HCP_NS/configmaps
# running POOL: machines of POOL that are nodes (Running), and all of them.
rp_ip_settled() {
  [ "$(running_machines rp)" = 3 ] && [ "$(running_machines ip)" = 3 ] &&
    [ "$(np_get rp .status.version)" = 4.17.0 ] && [ "$(np_get ip .status.version)" = 4.17.0 ] &&
    [ "$(np_get rp .status.replicas)" = 3 ] && [ "$(np_get ip .status.replicas)" = 3 ]
}
check "the pools run 4.17.0 on 3 nodes each; HyperShift reports it (status.version, status.replicas)" \
  wait_for "$SETTLE_WAIT" rp_ip_settled
ud_rp=$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)
ud_ip=$(get "$MS" .spec.template.spec.bootstrap.dataSecretName)
echo "# running user data: rp $ud_rp, ip $ud_ip"
check "the controller opts the NodePools in (the label the chart's objectSelector reads)" \
  wait_for 10 eval 'np_labelled rp && np_labelled ip && np_labelled cf'

# ---- restricted: 4.17.1 asked for, held at the NodePools, for longer than the TTL ----

SCENARIO=held
for p in rp ip; do
  out=$(api PATCH "$(np_path "$NS" $p)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}")
  check_eq "$p: spec.release.image stays" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
  check_eq "$p: the request is recorded" "$REL1" \
    "$(jq -r --arg k "$REQ" '.metadata.annotations[$k] // "{}" | fromjson | .release.image // ""' <<<"$out")"
done
out=$(api PATCH "$(np_path "$NS" cf)" '{"spec": {"config": [{"name": "tuned-2"}]}}')
check_eq "cf: spec.config stays" none "$(jq -r '.spec.config[0].name // "none"' <<<"$out")"
check_eq "cf: the request is recorded (configuration alone)" tuned-2 \
  "$(jq -r --arg k "$REQ" '.metadata.annotations[$k] // "{}" | fromjson | .config[0].name // ""' <<<"$out")"
sleep 5 # longer than the token TTL
# secret_state NAME: present/absent, and the token's expiry ("-" when none).
secret_state() {
  local ud tok
  ud=$(api GET "$CMS/$1" 2>/dev/null | jq -r '.data.token // empty')
  [ -n "$ud" ] || { echo absent; return; }
  tok=$(api GET "$CMS?labelSelector=e2e-model.hcp-controller/role%3Dtoken" |
    jq -r --arg t "$ud" '[.items[] | select(.data.token == $t)][0] |
      if . == null then "token-gone" else (.metadata.annotations["hypershift.openshift.io/ignition-token-expiration-timestamp"] // "-") end')
  echo "present $tok"
}
for p in rp ip; do
  ud=$([ $p = rp ] && echo "$ud_rp" || echo "$ud_ip")
  check_eq "$p: held past the TTL, the running template's user-data Secret exists and its token has no expiry" \
    "present -" "$(secret_state "$ud")"
  check_eq "$p: status.version stays the running one" 4.17.0 "$(np_get $p .status.version)"
  check_eq "$p: HyperShift retired no credentials (model record)" 0 \
    "$(model_records | jq -s --arg p "$HCP_NS/token-$p-" --arg u "$HCP_NS/user-data-$p-" \
      '[.[] | select((.event == "token-expiry-set" and (.object | startswith($p))) or
                     (.event == "user-data-deleted" and (.object | startswith($u))))] | length')"
done
check_eq "the Replace template stays" "$ud_rp" "$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)"
# What the held pools say, read before the scale and the remediation below,
# which take Cluster API most of the time to the window.
check_eq "no ChangesInitiated before the window" "0 0 0" "$(initiated rp) $(initiated ip) $(initiated cf)"
wait_for 5 eval 'cond "$(np_path "$NS" rp)" ChangesPending message | grep -qF "The held change (release $REL1)"'
check_contains "the pool's ChangesPending names the held change" "The held change (release $REL1)" \
  "$(cond "$(np_path "$NS" rp)" ChangesPending message)"
still_before a "$OPEN" "the held state"

# Scale 3 -> 5 and a remediation during the hold: the new machines join.
for p in rp ip; do api PATCH "$(np_path "$NS" $p)" '{"spec": {"replicas": 5}}' >/dev/null; done
five() { [ "$(running_machines rp)" = 5 ] && [ "$(running_machines ip)" = 5 ]; }
t0=$(now_us)
check "the scale 3 -> 5 gives machines that become nodes (both pools)" wait_for "$SCALE_WAIT" five
echo "# figure: held past the token TTL: NodePool scale 3 -> 5 to 5 nodes in $((($(now_us) - t0) / 1000)) ms (both pools)"
follows() { [ "$(np_get rp .status.replicas)" = 5 ] && [ "$(np_get ip .status.replicas)" = 5 ]; }
check "NodePool status.replicas follows the scale (HyperShift's status sync runs)" wait_for 10 follows
victim=$(machines_json rp | jq -r '.[0].metadata.name')
remediate_machine "$victim" || not_ok "machine $victim remediated"
rp_remediated() { [ "$(model_count remediation-replacement "$HCP_NS/rp")" -ge 1 ] && [ "$(running_machines rp)" = 5 ]; }
check "a machine remediated is replaced by one that becomes a node" wait_for "$REMEDIATE_WAIT" rp_remediated
check_eq "no machine failed to bootstrap (model record)" 0 \
  "$(model_records | jq -s '[.[] | select(.event == "bootstrap-failed")] | length')"
# (On the record's simulated time, so that it holds however late it is read.)
before_open() { model_count_before "$1" "$2" "$OPEN"; }
check_eq "no rollout before the window (model record)" "0 0 0" \
  "$(before_open replacement-start "$HCP_NS/rp") $(before_open inplace-update-start "$HCP_NS/ip") $(before_open replacement-start "$HCP_NS/cf")"
check_eq "status.version still 4.17.0" "4.17.0 4.17.0" "$(np_get rp .status.version) $(np_get ip .status.version)"
still_before a "$OPEN" "the scale and the remediation during the hold"

# ---- the window opens: the requests are applied, the rollouts start and complete ----

SCENARIO=window
both_started() { [ "$(model_count replacement-start "$HCP_NS/rp")" -ge 1 ] && [ "$(model_count inplace-update-start "$HCP_NS/ip")" -ge 1 ]; }
check "the window opens: both rollouts start" wait_for "$START_WAIT" both_started
# rp's rollout as HyperShift's template write sets it going (Cluster API's
# MachineDeployment controller makes the new MachineSet), then its first
# replacement (a Machine of that MachineSet).
check_rollout_starts window 1 "$START_TOL" "machineset-created $HCP_NS/rp" "replacement-start $HCP_NS/rp" \
  "inplace-update-start $HCP_NS/ip"
rp_ip_rolled() {
  [ "$(np_get rp .status.version)" = 4.17.1 ] && [ "$(np_get ip .status.version)" = 4.17.1 ]
}
check "the rollouts complete and HyperShift reports 4.17.1 (status.version)" wait_for "$ROLLED_WAIT" rp_ip_rolled
check_eq "the requests were applied" "$REL1 $REL1" "$(np_get rp .spec.release.image) $(np_get ip .spec.release.image)"
cf_rolled() { [ "$(np_get cf '.spec.config[0].name // ""')" = tuned-2 ] && [ "$(model_count replacement-start "$HCP_NS/cf")" -ge 1 ]; }
check "cf: its configuration is applied and rolled in the window" wait_for 20 cf_rolled
told() { [ "$(initiated rp)" -ge 1 ] && [ "$(initiated ip)" -ge 1 ] && [ "$(initiated cf)" -ge 1 ]; }
check "ChangesInitiated told for each held change let through" wait_for 10 told
sleep 2 # a second Event would be written by now
check_eq "ChangesInitiated exactly once each (rp and ip releases, cf configuration alone)" "1 1 1" \
  "$(initiated rp) $(initiated ip) $(initiated cf)"
check_eq "no machine failed to bootstrap, rollouts included" 0 \
  "$(model_records | jq -s '[.[] | select(.event == "bootstrap-failed")] | length')"

stop_ctl a
model_stop
summary
