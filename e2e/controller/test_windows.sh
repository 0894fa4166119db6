#!/usr/bin/env bash
# Controller scenarios about windows opening and closing on the simulated
# clock: no stanza, ByPolicy, NodePool narrower/wider than its HostedCluster,
# PermissiveUntil, RestrictiveUntil, an exclusion cutting a window.
#
# Each scenario starts the controller a few simulated minutes before a
# boundary with an accelerated clock, checks the CAPI objects and the status
# right after the controller converged (before the boundary), then checks
# that they flip at the boundary (not earlier, at most a few real seconds
# later). 2026-03-06 is a Friday, 2026-03-07 a Saturday.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

TOL=2.5 # real seconds a transition may lag its boundary

# A HostedCluster with no stanza is never paused, whatever policies exist.
no_stanza_never_pauses() {
  local ns c md rv_c rv_md
  ns=$(new_ns nostanza) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 1h)" || return
  must mk_hc "$ns" hc1 || return
  must mk_np "$ns" np1 hc1 || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  rv_c=$(get "$c" .metadata.resourceVersion) rv_md=$(get "$md" .metadata.resourceVersion)
  # A simulated day per second: three seconds cross Saturday's window edges.
  start_ctl a "$ns" 2026-03-06T22:00:00Z 86400 || { not_ok "controller starts"; return; }
  EVENTUALLY=5 eventually "HostedCluster condition ChangesPaused" False/ChangesPermitted \
    hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "NodePool condition ChangesPaused" False/ChangesPermitted \
    np_cond_sr "$ns" np1 ChangesPaused
  now_is "no stanza: no HostedChangeManagementStatus" NotFound \
    get "$(hcms_path "$ns" hostedcluster hc1)" .reason
  now_is "no stanza: none for its NodePool" NotFound get "$(hcms_path "$ns" nodepool np1)" .reason
  now_is "metric permissive_remaining -1" -1 obj_metric a change_management_permissive_remaining HostedCluster hc1
  now_is "metric strategy_enabled{Permissive} 1" 1 \
    obj_metric a change_management_strategy_enabled HostedCluster hc1 ',strategy="Permissive"'
  sleep 3
  now_is "Cluster never paused" unpaused pause_state "$c"
  now_is "MachineDeployment never paused" unpaused pause_state "$md"
  now_is "Cluster never written" "$rv_c" get "$c" .metadata.resourceVersion
  now_is "MachineDeployment never written" "$rv_md" get "$md" .metadata.resourceVersion
}

hc_cond_sr() { echo "$(cond "$(hc_path "$1" "$2")" "$3" status)/$(cond "$(hc_path "$1" "$2")" "$3" reason)"; }
np_cond_sr() { echo "$(cond "$(np_path "$1" "$2")" "$3" status)/$(cond "$(np_path "$1" "$2")" "$3" reason)"; }
hc_cm() { cm_status "$1" hostedcluster "$2" "$3"; }
np_cm() { cm_status "$1" nodepool "$2" "$3"; }

# ByPolicy: a weekly window (Saturday 00:00, 5m) opens and closes on time
# for the Cluster and the MachineDeployment.
bypolicy_weekly_window() {
  local ns c md
  ns=$(new_ns bypolicy) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_np "$ns" np1 hc1 policy=weekly || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T23:55:00Z 75 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "Cluster paused with the marker" paused+marker pause_state "$c"
  eventually "MachineDeployment paused with the marker" paused+marker pause_state "$md"
  eventually "HostedCluster ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "NodePool ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    np_cond_sr "$ns" np1 ChangesPaused
  check_contains "ChangesPaused message names the window start" "until 2026-03-07T00:00:00Z" \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "status next window" ChangesUnpaused/2026-03-07T00:00:00Z/2026-03-07T00:05:00Z \
    hc_cm "$ns" hc1 '.next | "\(.state)/\(.startTime)/\(.endTime)"'
  now_is "status policy" weekly hc_cm "$ns" hc1 .policy
  now_is "HCMP Ready=True" True cond "$(hcmp_path "$ns" weekly)" Ready status
  now_is "HCMP behavior.next.startTime" 2026-03-07T00:00:00Z \
    get "$(hcmp_path "$ns" weekly)" .status.behavior.next.startTime
  still_before a 2026-03-07T00:00:00Z "the paused state"

  expect_at a "Cluster unpaused" 2026-03-07T00:00:00Z "$TOL" is_state "$c" unpaused
  expect_at a "MachineDeployment unpaused" 2026-03-07T00:00:00Z "$TOL" is_state "$md" unpaused
  eventually "HostedCluster current window in status" ChangesUnpaused/2026-03-07T00:05:00Z \
    hc_cm "$ns" hc1 '.current | "\(.state)/\(.endTime)"'
  eventually "HostedCluster ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted \
    hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "NodePool ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted \
    np_cond_sr "$ns" np1 ChangesPaused
  eventually "HCMP behavior current ChangesUnpaused" ChangesUnpaused \
    get "$(hcmp_path "$ns" weekly)" .status.behavior.current.state
  eventually "WindowOpened Event for the HostedCluster" 1 count_events "$ns" hc1 WindowOpened
  still_before a 2026-03-07T00:05:00Z "the open window"

  expect_at a "Cluster paused with the marker" 2026-03-07T00:05:00Z "$TOL" is_state "$c" paused+marker
  expect_at a "MachineDeployment paused with the marker" 2026-03-07T00:05:00Z "$TOL" is_state "$md" paused+marker
  eventually "HostedCluster next window is a week later" 2026-03-14T00:00:00Z hc_cm "$ns" hc1 .next.startTime
  eventually "WindowClosed Event for the NodePool" 1 count_events "$ns" np1 WindowClosed
}

count_events() { events "$1" "$2" | grep -c "^$3\$"; }

# NodePool narrower than its HostedCluster: the cluster's window
# (00:00-00:20) opens first; the MachineDeployment waits for its own
# (00:05-00:10) and closes with it.
nodepool_narrower_than_cluster() {
  local ns c md
  ns=$(new_ns narrower) || return
  must mk_policy "$ns" wide "$(weekly_policy Saturday 00:00 20m)" || return
  must mk_policy "$ns" narrow "$(weekly_policy Saturday 00:05 5m)" || return
  must mk_hc "$ns" hc1 policy=wide || return
  must mk_np "$ns" np1 hc1 policy=narrow || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T23:55:00Z 100 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "Cluster paused" paused+marker pause_state "$c"
  eventually "MachineDeployment paused" paused+marker pause_state "$md"
  eventually "NodePool next window is the intersection" 2026-03-07T00:05:00Z/2026-03-07T00:10:00Z \
    np_cm "$ns" np1 '.next | "\(.startTime)/\(.endTime)"'
  now_is "NodePool clusterConstraint is the cluster's window" 2026-03-07T00:00:00Z/2026-03-07T00:20:00Z \
    np_cm "$ns" np1 '.clusterConstraint | "\(.startTime)/\(.endTime)"'
  still_before a 2026-03-07T00:00:00Z "the paused state"

  expect_at a "Cluster unpaused" 2026-03-07T00:00:00Z "$TOL" is_state "$c" unpaused
  sleep 0.5
  now_is "MachineDeployment still paused inside the cluster's window" paused+marker pause_state "$md"
  still_before a 2026-03-07T00:05:00Z "the MachineDeployment still paused"
  expect_at a "MachineDeployment unpaused" 2026-03-07T00:05:00Z "$TOL" is_state "$md" unpaused
  expect_at a "MachineDeployment paused again" 2026-03-07T00:10:00Z "$TOL" is_state "$md" paused+marker
  now_is "Cluster still unpaused after the NodePool's window" unpaused pause_state "$c"
  still_before a 2026-03-07T00:20:00Z "the Cluster still unpaused"
}

# NodePool wider than its HostedCluster: its own window (00:00-00:20) opens
# first but the MachineDeployment waits for the cluster's (00:05-00:10).
nodepool_wider_than_cluster() {
  local ns c md
  ns=$(new_ns wider) || return
  must mk_policy "$ns" wide "$(weekly_policy Saturday 00:00 20m)" || return
  must mk_policy "$ns" narrow "$(weekly_policy Saturday 00:05 5m)" || return
  must mk_hc "$ns" hc1 policy=narrow || return
  must mk_np "$ns" np1 hc1 policy=wide || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T23:55:00Z 100 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "Cluster paused" paused+marker pause_state "$c"
  eventually "MachineDeployment paused" paused+marker pause_state "$md"
  eventually "NodePool next window is the intersection" 2026-03-07T00:05:00Z/2026-03-07T00:10:00Z \
    np_cm "$ns" np1 '.next | "\(.startTime)/\(.endTime)"'
  still_before a 2026-03-07T00:00:00Z "the paused state"

  sleep_until_sim a 2026-03-07T00:00:00Z 0.7
  now_is "MachineDeployment still paused inside its own window" paused+marker pause_state "$md"
  now_is "Cluster still paused" paused+marker pause_state "$c"
  now_is "NodePool says its HostedCluster restricts it" HostedClusterRestricted \
    cond "$(np_path "$ns" np1)" ChangesPaused reason
  check_contains "NodePool message names the HostedCluster" "its HostedCluster's does not" \
    "$(cond "$(np_path "$ns" np1)" ChangesPaused message)"
  still_before a 2026-03-07T00:05:00Z "the MachineDeployment held by the cluster"
  expect_at a "Cluster unpaused" 2026-03-07T00:05:00Z "$TOL" is_state "$c" unpaused
  expect_at a "MachineDeployment unpaused" 2026-03-07T00:05:00Z "$TOL" is_state "$md" unpaused
  expect_at a "MachineDeployment paused when the cluster's window closes" 2026-03-07T00:10:00Z "$TOL" \
    is_state "$md" paused+marker
  expect_at a "Cluster paused" 2026-03-07T00:10:00Z "$TOL" is_state "$c" paused+marker
  sleep 0.5
  now_is "MachineDeployment stays paused inside its own window" paused+marker pause_state "$md"
  still_before a 2026-03-07T00:20:00Z "the MachineDeployment still paused"
}

# PermissiveUntil 23:57 then the policy (window Saturday 00:00-00:05).
permissive_until_back_to_policy() {
  local ns c md
  ns=$(new_ns permuntil) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 strategy=PermissiveUntil permissive-until=2026-03-06T23:57:00Z policy=weekly || return
  must mk_np "$ns" np1 hc1 || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T23:52:00Z 80 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "HostedCluster ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted \
    hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "status strategy PermissiveUntil" PermissiveUntil hc_cm "$ns" hc1 .strategy
  now_is "status current ends at permissive-until" ChangesUnpaused/2026-03-06T23:57:00Z \
    hc_cm "$ns" hc1 '.current | "\(.state)/\(.endTime)"'
  check_contains "message says what follows" 'then policy "weekly"' \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "Cluster unpaused" unpaused pause_state "$c"
  now_is "MachineDeployment unpaused" unpaused pause_state "$md"
  now_is "metric strategy_enabled{Permissive} 1 while the override is in force" 1 \
    obj_metric a change_management_strategy_enabled HostedCluster hc1 ',strategy="Permissive"'
  now_is "metric stanza_strategy{PermissiveUntil} 1" 1 \
    obj_metric a change_management_stanza_strategy HostedCluster hc1 ',strategy="PermissiveUntil"'
  still_before a 2026-03-06T23:57:00Z "the permitted state"

  expect_at a "Cluster paused when PermissiveUntil expires" 2026-03-06T23:57:00Z "$TOL" is_state "$c" paused+marker
  expect_at a "MachineDeployment paused" 2026-03-06T23:57:00Z "$TOL" is_state "$md" paused+marker
  eventually "HostedCluster ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "metric strategy_enabled{MaintenanceSchedule} 1 once the policy took over" 1 \
    obj_metric a change_management_strategy_enabled HostedCluster hc1 ',strategy="MaintenanceSchedule"'
  now_is "status next is the policy's window" 2026-03-07T00:00:00Z/2026-03-07T00:05:00Z \
    hc_cm "$ns" hc1 '.next | "\(.startTime)/\(.endTime)"'
  expect_at a "Cluster unpaused in the policy's window" 2026-03-07T00:00:00Z "$TOL" is_state "$c" unpaused
  expect_at a "MachineDeployment unpaused in the policy's window" 2026-03-07T00:00:00Z "$TOL" is_state "$md" unpaused
}

# RestrictiveUntil 23:54: then Permissive (no policy), or the policy (still
# closed) until an SRE switches to Permissive.
restrictive_until_then_permissive() {
  local ns c1 c2 md
  ns=$(new_ns restuntil) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 strategy=RestrictiveUntil restrictive-until=2026-03-06T23:54:00Z || return
  must mk_hc "$ns" hc2 strategy=RestrictiveUntil restrictive-until=2026-03-06T23:54:00Z policy=weekly || return
  must mk_np "$ns" np1 hc1 || return
  c1=$(cluster_path "$ns" hc1) c2=$(cluster_path "$ns" hc2) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T23:50:00Z 60 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "Cluster paused" paused+marker pause_state "$c1"
  eventually "MachineDeployment paused" paused+marker pause_state "$md"
  eventually "ChangesPaused=True (RestrictiveUntil)" True/RestrictiveUntil hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "message names the end" "until 2026-03-06T23:54:00Z" \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "status strategy RestrictiveUntil" RestrictiveUntil hc_cm "$ns" hc1 .strategy
  now_is "second Cluster paused" paused+marker pause_state "$c2"
  still_before a 2026-03-06T23:54:00Z "the restricted state"

  expect_at a "Cluster unpaused when RestrictiveUntil expires" 2026-03-06T23:54:00Z "$TOL" is_state "$c1" unpaused
  expect_at a "MachineDeployment unpaused" 2026-03-06T23:54:00Z "$TOL" is_state "$md" unpaused
  eventually "status: permitted with no end" ChangesUnpaused/null hc_cm "$ns" hc1 '.current | "\(.state)/\(.endTime)"'
  now_is "status: no next change" null hc_cm "$ns" hc1 .next
  sleep 0.3
  now_is "the Cluster with a policy stays paused (window closed)" paused+marker pause_state "$c2"
  now_is "its ChangesPaused condition is True" True cond "$(hc_path "$ns" hc2)" ChangesPaused status
  check_contains "its ChangesPaused message gives the policy's window" "until 2026-03-07T00:00:00Z" \
    "$(cond "$(hc_path "$ns" hc2)" ChangesPaused message)"
  still_before a 2026-03-07T00:00:00Z "the policy's closed window"
  # The SRE switches it to Permissive.
  must api PATCH "$(hc_path "$ns" hc2)" \
    "{\"metadata\": {\"annotations\": {\"$CM/strategy\": \"Permissive\"}}}" || return
  eventually "strategy Permissive unpauses it" unpaused pause_state "$c2"
  still_before a 2026-03-07T00:00:00Z "the unpause by strategy Permissive"
  eventually "status strategy Permissive" Permissive hc_cm "$ns" hc2 .strategy
}

# An exclusion on Saturday cuts Friday's 23:50-00:10 window at midnight.
exclusion_cuts_window() {
  local ns c
  ns=$(new_ns exclusion) || return
  must mk_policy "$ns" friday "$(weekly_policy Friday 23:50 20m \
    '[{"fromDate": "2026-03-07", "untilDate": "2026-03-08", "reason": "release freeze"}]')" || return
  must mk_hc "$ns" hc1 policy=friday || return
  c=$(cluster_path "$ns" hc1)
  start_ctl a "$ns" 2026-03-06T23:42:30Z 150 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "Cluster paused" paused+marker pause_state "$c"
  eventually "status next window ends at the exclusion" 2026-03-06T23:50:00Z/2026-03-07T00:00:00Z \
    hc_cm "$ns" hc1 '.next | "\(.startTime)/\(.endTime)"'
  still_before a 2026-03-06T23:50:00Z "the paused state"

  expect_at a "Cluster unpaused" 2026-03-06T23:50:00Z "$TOL" is_state "$c" unpaused
  expect_at a "Cluster paused at the exclusion" 2026-03-07T00:00:00Z "$TOL" is_state "$c" paused+marker
  check_contains "HCMP status gives the exclusion's reason" "release freeze" \
    "$(get "$(hcmp_path "$ns" friday)" .status.behavior.current.reason)"
  eventually "HostedCluster ChangesPaused=True (Excluded)" True/Excluded hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "HostedCluster condition names the exclusion and its end" \
    'inside the exclusion "release freeze", which ends at 2026-03-08T00:00:00Z' \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  eventually "status next window is a week later" 2026-03-13T23:50:00Z hc_cm "$ns" hc1 .next.startTime
  sleep_until_sim a 2026-03-07T00:05:00Z
  now_is "Cluster still paused in the cut-off part" paused+marker pause_state "$c"
  still_before a 2026-03-07T00:10:00Z "the cut-off part"
}

# HyperShift writes a HostedCluster's status with Status().Update: the whole
# status from its own copy, where our conditions may be missing. Ours come
# back, and HyperShift's own condition is kept.
status_update_keeps_conditions() {
  local ns obj code
  ns=$(new_ns stupdate) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 || { not_ok "controller starts"; return; }
  EVENTUALLY=5 eventually "HostedCluster ChangesPaused=True (OutsideMaintenanceWindow)" \
    True/OutsideMaintenanceWindow hc_cond_sr "$ns" hc1 ChangesPaused
  obj=$(api GET "$(hc_path "$ns" hc1)") || { not_ok "read the HostedCluster"; return; }
  obj=$(jq -c '.status.conditions = [{type: "Available", status: "True", reason: "AsExpected",
    message: "The hosted control plane is available", lastTransitionTime: "2026-03-01T00:00:00Z"}]' <<<"$obj")
  code=$(api PUT "$(hc_path "$ns" hc1)/status" "$obj" application/json >/dev/null 2>&1; echo $?)
  check_eq "the whole-status update is accepted" 0 "$code"
  eventually "ChangesPaused comes back (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "ChangesPending comes back" False/NoChangesPending hc_cond_sr "$ns" hc1 ChangesPending
  now_is "HyperShift's own condition is kept" True/AsExpected hc_cond_sr "$ns" hc1 Available
}

begin_suite
run_scenario no_stanza_never_pauses
run_scenario bypolicy_weekly_window
run_scenario nodepool_narrower_than_cluster
run_scenario nodepool_wider_than_cluster
run_scenario permissive_until_back_to_policy
run_scenario restrictive_until_then_permissive
run_scenario exclusion_cuts_window
run_scenario status_update_keeps_conditions
summary
