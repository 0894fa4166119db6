#!/usr/bin/env bash
# Controller scenarios about policies that cannot be followed: a missing
# policy and an invalid one restrict changes (fail safe) with a condition
# that names the policy, and following it again once it is fixed.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"


# A HostedCluster following a policy that does not exist is restricted;
# creating the policy lets it follow it.
missing_policy_restricts() {
  local ns c md
  ns=$(new_ns missing) || return
  must mk_hc "$ns" hc1 policy=nowhere || return
  must mk_np "$ns" np1 hc1 || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 || { not_ok "controller starts"; return; }
  eventually "Cluster paused with the marker" paused+marker pause_state "$c"
  eventually "MachineDeployment paused (its cluster is restricted)" paused+marker pause_state "$md"
  eventually "ChangesPaused=True (PolicyNotFound)" True/PolicyNotFound hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "the message names the policy" 'policy "nowhere" not found' \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "status current reason PolicyNotFound" ChangesPaused/PolicyNotFound \
    cm_status "$ns" hostedcluster hc1 '.current | "\(.state)/\(.reason)"'
  now_is "metric next_change_eta -2 (error)" -2 obj_metric a change_management_next_change_eta HostedCluster hc1
  # The policy appears (Permissive): changes are permitted.
  must mk_policy "$ns" nowhere '{"strategy": "Permissive"}' || return
  eventually "Cluster unpaused once the policy exists" unpaused pause_state "$c"
  eventually "MachineDeployment unpaused" unpaused pause_state "$md"
  eventually "ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "metric policy_ready 1 for the new policy" 1 metric a "change_management_policy_ready\\{namespace=\"$ns\",policy=\"nowhere\"\\}"
}

# A policy the API server accepts but the controller cannot evaluate (COUNT is
# outside the supported rrule subset) is Ready=False and restricts its users.
invalid_policy_restricts() {
  local ns c p
  ns=$(new_ns invalid) || return
  must mk_policy "$ns" broken '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {
    "permit": {"rrule": "FREQ=DAILY;COUNT=3", "duration": "2h"}}}' || return
  must mk_hc "$ns" hc1 policy=broken || return
  c=$(cluster_path "$ns" hc1) p=$(hcmp_path "$ns" broken)
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 check "HCMP Ready=False" is_eq False cond "$p" Ready status
  check "HCMP Ready message explains (COUNT)" cond_has "$p" Ready COUNT
  eventually "Cluster paused with the marker" paused+marker pause_state "$c"
  eventually "ChangesPaused=True (PolicyNotReady)" True/PolicyNotReady hc_cond_sr "$ns" hc1 ChangesPaused
  local msg
  msg=$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)
  check_contains "the message names the policy" '"broken"' "$msg"
  check_contains "the message says why" COUNT "$msg"
  eventually "PolicyInvalid Event" 1 count_events "$ns" broken PolicyInvalid
  now_is "metric policy_ready 0" 0 metric a "change_management_policy_ready\\{namespace=\"$ns\",policy=\"broken\"\\}"
  # Fixing the policy lifts the restriction.
  must api PATCH "$p" '{"spec": {"maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "duration": null}}}}' || return
  EVENTUALLY=3 check "HCMP Ready=True once fixed" is_eq True cond "$p" Ready status
  eventually "Cluster unpaused (daily window all day)" unpaused pause_state "$c"
  eventually "ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "metric policy_ready 1 once fixed" 1 metric a "change_management_policy_ready\\{namespace=\"$ns\",policy=\"broken\"\\}"
}

begin_suite
run_scenario missing_policy_restricts
run_scenario invalid_policy_restricts
summary
