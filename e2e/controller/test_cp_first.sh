#!/usr/bin/env bash
# End-to-end: the control plane first (DESIGN.md 3.6), beside the HyperShift
# behaviour model (e2e/model) and Cluster API's own controllers (instance
# "capi", e2e/capi/capi.mk), with HostedCluster status
# (--hc-status: status.version.history Partial, then Completed when the
# control plane has rolled out, as hostedcluster_controller.go's
# computeClusterVersionStatus writes it).
#
# HyperShift lets a NodePool run a patch ahead of its control plane (only
# a minor ahead is refused, supportedversion.IsValidReleaseVersion); its
# versioning support says it never may. On a Friday evening, outside the
# Saturday 01:00 window they share, HostedCluster a and its pool rp are
# asked for 4.17.1 together, and pool ahead for 4.17.2:
#   - the window opens: the control plane starts 4.17.1 (30 simulated
#     minutes, 3 s real); rp starts no replacement before the control plane
#     has completed 4.17.1 (the model's controlplane-completed record), and
#     its ChangesPending says it waits for the control plane (reason
#     WaitingForControlPlane, with an Event);
#   - rp's rollout starts within 2 s (real) of the completion: its new
#     MachineSet, and its first replacement (a new Machine, which Cluster
#     API's MachineSet controller makes two to three seconds after the
#     MachineSet: CP_TOL on "capi");
#   - ahead (asked for 4.17.2 while the control plane completes 4.17.1, and
#     again while the window is open) never starts; its spec.release stays,
#     and the reason is on its conditions, its companion and an Event.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"
# The fixture's control plane has completed 4.17.0 only (lib.sh's mk_hc).
MK_HC_COMPLETED=""

SIM0=2026-03-06T23:30:00Z # Friday 23:30
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=600                 # a real second is ten simulated minutes: 9 s to the window
REASON=WaitingForControlPlane
WH_NAME=hcp-e2e-cpfirst-$$
SETTLE_WAIT=30 CP_TOL=2 # real seconds

webhook_scenario_begin
# (the instance's environment, E_CAPI, is read by webhook_scenario_begin)
# Real Machines come up in real seconds: 60 s to the window there.
if [ "${E_CAPI:-}" = 1 ]; then SIM0=2026-03-06T22:30:00Z SCALE=150 SETTLE_WAIT=55 CP_TOL=4; fi

NS=$(new_ns cpfirst)
HCP_NS=$NS-a
WPORT=$(free_port)
holds_webhook_config "$WPORT" "$NS" "$HCP_NS" | k apply -f - >/dev/null || not_ok "webhook configuration"
mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
model_scenario_start a --replacement-duration 10m --hc-status \
  --controlplane-update-duration 30m
mk_pool rp Replace 2
mk_pool ahead Replace 1
settled() {
  [ "$(np_get rp .status.version)" = 4.17.0 ] && [ "$(np_get ahead .status.version)" = 4.17.0 ] &&
    np_labelled rp && np_labelled ahead
}
check "the pools run 4.17.0 and are opted in" wait_for "$SETTLE_WAIT" settled
still_before a "$OPEN" "the pools came up" || { summary; exit 1; }

# ---- Friday: the HostedCluster and rp asked for 4.17.1 together, ahead for 4.17.2 ----

SCENARIO=asked
out=$(api PATCH "$(hc_path "$NS" a)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}")
check_eq "the HostedCluster's release is held for the window" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
out=$(api PATCH "$(np_path "$NS" rp)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}")
check_eq "rp's release is held at the NodePool" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
out=$(api PATCH "$(np_path "$NS" ahead)" "{\"spec\": {\"release\": {\"image\": \"$REL2\"}}}")
check_eq "ahead's release is held at the NodePool" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
waits() { [ "$(cond "$(np_path "$NS" "$1")" ChangesPending reason)" = "$REASON" ]; }
check "ahead says it waits for the control plane (ChangesPending $REASON)" wait_for 5 waits ahead
check_contains "naming both releases" "release 4.17.2 is newer than 4.17.0" \
  "$(cond "$(np_path "$NS" ahead)" ChangesPending message)"

# ---- Saturday 01:00: the control plane goes first --------------------------------------

SCENARIO=window
cp_done() { [ "$(model_count controlplane-completed "$NS/a")" -ge 1 ]; }
# While the control plane rolls: rp waits, and says so.
cp_started() { [ "$(model_count controlplane-initiation "$NS/a")" -ge 1 ]; }
check "the window opens: the control plane starts 4.17.1" wait_for 20 cp_started
if ! cp_done; then
  check "rp waits for the control plane while it rolls (ChangesPending $REASON)" wait_for 2 waits rp
  check_contains "rp's ChangesPending names the control plane's version" "release 4.17.1 is newer than 4.17.0" \
    "$(cond "$(np_path "$NS" rp)" ChangesPending message)"
else
  not_ok "the control plane completed before it could be watched rolling"
fi
check "the control plane completes 4.17.1 (status.version.history Completed)" wait_for 20 cp_done
rp_started() { [ "$(model_count replacement-start "$HCP_NS/rp")" -ge 1 ]; }
check "then rp's rollout starts" wait_for 10 rp_started
done_at=$(first_real controlplane-completed "$NS/a")
start_at=$(first_real replacement-start "$HCP_NS/rp")
# rp's new MachineSet: its last machineset-created (the first is the pool's own).
ms_at=$(last_real machineset-created "$HCP_NS/rp")
before=$(model_records | jq -s --arg o "$HCP_NS/rp" --arg d "$done_at" \
  '[.[] | select(.event == "replacement-start" and .object == $o and .real < $d)] | length')
check_eq "0 worker rollouts to 4.17.1 before the control plane completed it" 0 "$before"
ms_lag=$(awk -v a="$(secs "$ms_at")" -v b="$(secs "$done_at")" 'BEGIN { printf "%.3f", a - b }')
lag=$(awk -v a="$(secs "$start_at")" -v b="$(secs "$done_at")" 'BEGIN { printf "%.3f", a - b }')
echo "# figure: control plane completed 4.17.1 -> rp's new MachineSet: $ms_lag s, its first replacement: $lag s real (load average $(cut -d' ' -f1 /proc/loadavg))"
in_range "rp's new MachineSet within $(real_s 2) s of the control plane's completion, not before" "$ms_lag" 0 "$(real_s 2)"
in_range "rp's first replacement within $(real_s "$CP_TOL") s of the control plane's completion" "$lag" 0 "$(real_s "$CP_TOL")"
check "a $REASON Event on rp" eval 'events "$NS" rp | grep -qx "$REASON"'
check_eq "rp's request is applied" "$REL1" "$(np_get rp .spec.release.image)"

# ---- ahead: never started, and says why ---------------------------------------------

SCENARIO=ahead
# Asked again inside the open window: held all the same.
out=$(api PATCH "$(np_path "$NS" ahead)" "{\"spec\": {\"release\": {\"image\": \"$REL2\"}, \"replicas\": 1}}")
check_eq "asked for 4.17.2 inside the window: still held" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
sleep 2
check_eq "ahead: no rollout started (model record)" 0 "$(model_count replacement-start "$HCP_NS/ahead")"
check_eq "ahead: spec.release stays 4.17.0" "$REL0" "$(np_get ahead .spec.release.image)"
check_eq "ahead: HyperShift reports 4.17.0 (status.version)" 4.17.0 "$(np_get ahead .status.version)"
check "ahead: ChangesPending $REASON" waits ahead
check_contains "ahead: the message names 4.17.2 and the control plane's 4.17.1" \
  "release 4.17.2 is newer than 4.17.1, the newest release the control plane has completed" \
  "$(cond "$(np_path "$NS" ahead)" ChangesPending message)"
check_eq "ahead: ChangesPaused $REASON while the window is open" "$REASON" \
  "$(cond "$(np_path "$NS" ahead)" ChangesPaused reason)"
check_contains "ahead: the companion says so" "release 4.17.2 is newer than 4.17.1" \
  "$(get "$(hcms_path "$NS" nodepool ahead)" '.status.waitingForControlPlane.message // ""')"
check "ahead: a $REASON Event" eval 'events "$NS" ahead | grep -qx "$REASON"'

stop_ctl a
model_stop
summary
