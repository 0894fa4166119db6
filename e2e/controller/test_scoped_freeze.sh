#!/usr/bin/env bash
# End-to-end: a scoped exclusion (exclude[].scope, DESIGN.md 3.16) beside the
# HyperShift behaviour model (e2e/model) and, on instance "capi", Cluster
# API's own controllers, with HostedCluster status (--hc-status: the model
# plays the control plane's rollout).
#
# Policy weekend permits Saturday 23:00-03:00 UTC; Saturday is inside a
# freeze of scope Nodes ("black-friday"), which ends at Sunday 00:00. On the
# Saturday evening HostedCluster a is asked for the z-stream 4.17.1 and its
# pool rp for 4.17.1 too (both held at admission):
#   - at 23:00 the control plane starts 4.17.1: the z-stream passes the
#     node freeze, on time (within 2 s, real, of the opening);
#   - rp starts no replacement while the freeze lasts, and its conditions
#     and companion name the exclusion and its scope;
#   - at Sunday 00:00, still inside the window and the freeze over, rp's
#     rollout starts (within CP_TOL s, real).
# The negative control is the same suite's rp: held while the scope holds
# it, let through the moment it does not.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-07T21:00:00Z   # Saturday 21:00: restricted
OPEN=2026-03-07T23:00:00Z   # the window opens; inside the freeze
THAW=2026-03-08T00:00:00Z   # the freeze ends, inside the window
SCALE=600                   # a real second is ten simulated minutes
WH_NAME=hcp-e2e-scopedfreeze-$$
SETTLE_WAIT=30 OPEN_TOL=2 CP_TOL=2 # real seconds

webhook_scenario_begin
# Real Machines come up in real seconds: more of them before the window.
if [ "${E_CAPI:-}" = 1 ]; then SIM0=2026-03-07T20:30:00Z SCALE=150 SETTLE_WAIT=55 CP_TOL=4; fi

NS=$(new_ns scopedfreeze)
HCP_NS=$NS-a
WPORT=$(free_port)
holds_webhook_config "$WPORT" "$NS" "$HCP_NS" | k apply -f - >/dev/null || not_ok "webhook configuration"
mk_policy "$NS" weekend "$(weekly_policy Saturday 23:00 4h \
  '[{"fromDate":"2026-03-07","reason":"black-friday","scope":"Nodes"}]')" || not_ok "policy"
check "the policy with a scoped exclusion is accepted by the CRD's validation" \
  eval '[ "$(get "$(hcmp_path "$NS" weekend)" ".spec.maintenanceSchedule.exclude[0].scope")" = Nodes ]'
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
model_scenario_start a --replacement-duration 10m --hc-status --controlplane-update-duration 30m
mk_pool rp Replace 2
settled() { [ "$(np_get rp .status.version)" = 4.17.0 ] && np_labelled rp; }
check "the pool runs 4.17.0 and is opted in" wait_for "$SETTLE_WAIT" settled

SCENARIO=asked
out=$(api PATCH "$(hc_path "$NS" a)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}")
check_eq "the HostedCluster's z-stream is held for the window" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
out=$(api PATCH "$(np_path "$NS" rp)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}")
check_eq "rp's release is held at the NodePool" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
still_before a "$OPEN" "both requests held" || { summary; exit 1; }

SCENARIO=window
cp_started() { [ "$(model_count controlplane-initiation "$NS/a")" -ge 1 ]; }
sleep_until_sim a "$OPEN"
check "the window opens in the node freeze: the control plane starts 4.17.1" wait_for 20 cp_started
t_open=$(ctl_real_at a "$OPEN")
lag=$(awk -v a="$(secs "$(first_real controlplane-initiation "$NS/a")")" -v b="$t_open" 'BEGIN { printf "%.3f", a - b }')
echo "# figure: the z-stream through a Nodes freeze: the control plane started $lag s (real) after the window opened (load average $(cut -d' ' -f1 /proc/loadavg))"
in_range "the control plane starts within $(real_s "$OPEN_TOL") s of the opening, not before" "$lag" 0 "$(real_s "$OPEN_TOL")"
scoped() { cond "$(np_path "$NS" rp)" ChangesPaused message | grep -q 'black-friday (scope Nodes)'; }
check "rp's ChangesPaused names the exclusion and its scope" wait_for 5 scoped
check_contains "rp's companion says what holds it" "black-friday (scope Nodes)" \
  "$(get "$(hcms_path "$NS" nodepool rp)" '.status | tostring')"
cp_done() { [ "$(model_count controlplane-completed "$NS/a")" -ge 1 ]; }
check "the control plane completes 4.17.1" wait_for 20 cp_done
still_before a "$THAW" "rp held through the freeze" || { summary; exit 1; }
check_eq "rp: no replacement in the freeze (model record)" 0 "$(model_count replacement-start "$HCP_NS/rp")"
check_eq "rp: spec.release stays 4.17.0 in the freeze" "$REL0" "$(np_get rp .spec.release.image)"

SCENARIO=thaw
rp_started() { [ "$(model_count replacement-start "$HCP_NS/rp")" -ge 1 ]; }
sleep_until_sim a "$THAW"
check "the freeze ends inside the window: rp's rollout starts" wait_for 30 rp_started
t_thaw=$(ctl_real_at a "$THAW")
lag=$(awk -v a="$(secs "$(first_real replacement-start "$HCP_NS/rp")")" -v b="$t_thaw" 'BEGIN { printf "%.3f", a - b }')
echo "# figure: the node change held by the Nodes freeze: rp's first replacement $lag s (real) after the freeze ended"
in_range "rp's first replacement within $(real_s "$CP_TOL") s of the freeze's end, not before" "$lag" 0 "$(real_s "$CP_TOL")"
check_eq "rp's request is applied" "$REL1" "$(np_get rp .spec.release.image)"

stop_ctl a
model_stop
summary
