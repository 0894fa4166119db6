#!/usr/bin/env bash
# Controller scenarios about windows opening and closing on the simulated
# clock: no stanza, ByPolicy, NodePool narrower/wider than its HostedCluster,
# PermissiveUntil, RestrictiveUntil, an exclusion cutting a window.
#
# Each scenario runs beside the HyperShift / Cluster API behaviour model
# (e2e/model) with the admission webhooks (the real API server calls the
# controller's holds, scoped to the scenario's namespaces), and answers the
# question "would HyperShift and Cluster API have started a rollout?" from
# the model's record: a release (HostedCluster) and a version change
# (NodePool) requested before a boundary are held; the model records no
# control-plane initiation and no machine replacement before the boundary
# and the first within TOL real seconds after it (TOL_ROLLOUT for a
# rollout's first replacement); a window closing during a
# rollout stops new replacements (the one under way finishes), and a release
# requested after the close is held. Conditions, the
# HostedChangeManagementStatus, the policy's status, Events and metrics are
# checked beside. 2026-03-06 is a Friday, 2026-03-07 a Saturday.
#
# (The whole-status update of a HostedCluster that drops our conditions is
# in test_companion.sh, beside the model's own status writes.)
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller
# and the model (e2e/model/build.sh, or HCP_MODEL_BIN). `make e2e-capi` runs
# it on the "capi" instance too (CTL_E2E_INSTANCE=capi), where Cluster API's
# own controllers act on the machines the model records. CTL_E2E_ONLY="fn ..."
# runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

TOL=2.5 # real seconds a transition may lag its boundary
# A rollout's first replacement lags more: HyperShift's template write,
# Cluster API's new MachineSet and machine are three writes after ours.
TOL_ROLLOUT=4
# How long a 2-machine rollout may take, start to end: the model replaces a
# machine in its --replacement-duration (about 1 s real here); Cluster API
# (instance "capi", e2e/README.md "Real Cluster API") in about 17 s, one
# machine at a time, each object reconciled at most once a second.
ROLLOUT_WAIT=10
WH_NAME=hcp-e2e-windows-$$

# managers PATH: the field managers of the object (its managedFields), one
# a line: who wrote it, as the API server records it.
managers() { get "$1" '.metadata.managedFields // [] | .[].manager'; }


# rollout_cut NAME CLOSE MD OBJECT REPLICAS: a Replace rollout under way
# when the window closes at CLOSE: the MachineDeployment is paused (with
# the marker), no replacement starts more than 1 s (real) after the close
# (the scenarios choose replacements of about 1 s real and more machines
# than the window can replace: unpaused, two more would start within the 3 s
# watched), and fewer than REPLICAS machines were replaced.
rollout_cut() {
  local name=$1 close=$2 md=$3 obj=$4 n=$5
  expect_at "$name" "the rollout under way is paused when the window closes" "$close" "$TOL" \
    is_state "$md" paused+marker
  check_contains "the pause is the controller's write (a field manager of the MachineDeployment)" \
    hcp-controller "$(managers "$md")"
  sleep_until_sim "$name" "$close" 3
  none_after "$name" "no replacement starts more than 1 s after the close (model record)" "$close" \
    replacement-start "$obj"
  in_range "the rollout was cut: replacements done of $n" "$(model_count replacement-done "$obj")" 0 $((n - 1))
}

# A HostedCluster and a NodePool without a stanza are never held or
# touched, whatever policies exist: what is requested starts at once.
no_stanza_never_pauses() {
  local ns c md
  ns=$(new_ns nostanza) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 1h)" || return
  must mk_hc "$ns" hc1 || return
  must model_np "$ns" np1 hc1 2 || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  model_scenario "$ns" 2026-03-06T22:00:00Z 60 hc1 --replacement-duration 1m || return
  check "the model created the MachineDeployment and its machines" wait_for 20 \
    model_machines "$ns-hc1/np1" 2
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
  local rv_c s0
  rv_c=$(get "$c" .metadata.resourceVersion) s0=$(model_summary)
  goes_at_once "$ns"
  check "the rollout completes" wait_for "$ROLLOUT_WAIT" eval '[ "$(model_count replacement-done "$ns-hc1/np1")" -ge 2 ]'
  now_is "the new template went through" 4.17.1 md_version "$md"
  now_is "Cluster never paused" unpaused pause_state "$c"
  now_is "MachineDeployment never paused" unpaused pause_state "$md"
  now_is "Cluster: no field of it is the controller's" "" eval "managers '$c' | grep -x hcp-controller"
  now_is "MachineDeployment: no field of it is the controller's" "" eval "managers '$md' | grep -x hcp-controller"
  if [ "${E_CAPI:-}" != 1 ]; then
    # The model is the only other writer: every write it did not make is
    # someone else's. (Beside Cluster API, its controllers write both
    # objects too; the field managers above say who.)
    now_is "Cluster never written" "$rv_c" get "$c" .metadata.resourceVersion
    local k="MachineDeployment $ns-hc1/np1"
    now_is "MachineDeployment written by HyperShift and Cluster API only" 0 \
      jq -n --argjson a "$s0" --argjson b "$(model_summary)" --arg k "$k" \
      '(($b.observed[$k] // 0) - ($a.observed[$k] // 0)) - (($b.writes[$k] // 0) - ($a.writes[$k] // 0))'
  fi
  now_is "nothing was held at admission" 0 metric a 'hcp_controller_admission_requests_total\{result="patched"\}'
}

# ByPolicy: a weekly window (Saturday 00:00, 5m). A release and a NodePool
# version change requested on Friday evening start when it opens; it closes
# mid-rollout.
bypolicy_weekly_window() {
  local ns c md
  ns=$(new_ns bypolicy) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must model_np "$ns" np1 hc1 6 policy=weekly || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  model_scenario "$ns" 2026-03-06T23:49:00Z 75 hc1 --replacement-duration 90s || return
  check "the model created the MachineDeployment and its machines" wait_for 10 \
    model_machines "$ns-hc1/np1" 6
  EVENTUALLY=3 eventually "HostedCluster ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "NodePool ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    np_cond_sr "$ns" np1 ChangesPaused
  release_held "a release on Friday evening" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  nodepool_held "a NodePool version change" "$(np_path "$ns" np1)" "$md"
  eventually "ChangesPending=True (ChangesBlocked) while held" True/ChangesBlocked \
    hc_cond_sr "$ns" hc1 ChangesPending
  eventually "the Cluster carries the pause with the marker (the signal to CAPI tooling)" paused+marker \
    pause_state "$c"
  now_is "merely waiting, the MachineDeployment is not paused" unpaused pause_state "$md"
  check_contains "ChangesPaused message names the window start" "until 2026-03-07T00:00:00Z" \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "status next window" ChangesUnpaused/2026-03-07T00:00:00Z/2026-03-07T00:05:00Z \
    hc_cm "$ns" hc1 '.next | "\(.state)/\(.startTime)/\(.endTime)"'
  now_is "status policy" weekly hc_cm "$ns" hc1 .policy
  now_is "HCMP Ready=True" True cond "$(hcmp_path "$ns" weekly)" Ready status
  now_is "HCMP behavior.next.startTime" 2026-03-07T00:00:00Z \
    get "$(hcmp_path "$ns" weekly)" .status.behavior.next.startTime
  still_before a 2026-03-07T00:00:00Z "the held state"

  starts_at a "the control plane starts rolling" 2026-03-07T00:00:00Z "$TOL" controlplane-initiation "$ns/hc1"
  starts_at a "the first machine replacement" 2026-03-07T00:00:00Z "$TOL_ROLLOUT" replacement-start "$ns-hc1/np1"
  now_is "the held release is applied" "$REL1" get "$(hc_path "$ns" hc1)" .spec.release.image
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

  rollout_cut a 2026-03-07T00:05:00Z "$md" "$ns-hc1/np1" 6
  release_held "a release after the close" "$(hc_path "$ns" hc1)" "$REL2" "$REL1"
  sleep 1
  now_is "no control-plane initiation to it (model record)" "" model_to controlplane-initiation "$ns/hc1" "$REL2"
  eventually "HostedCluster next window is a week later" 2026-03-14T00:00:00Z hc_cm "$ns" hc1 .next.startTime
  eventually "WindowClosed Event for the NodePool" 1 count_events "$ns" np1 WindowClosed
}

# goes_at_once NS: permitted, a release of HostedCluster hc1 is admitted
# as written and HyperShift starts the control-plane update at once; a
# version change of its NodePool np1 rolls out at once (model record).
goes_at_once() {
  local out
  out=$(request_release "$(hc_path "$1" hc1)" "$REL1")
  check_eq "permitted: a release is admitted as written" "$REL1" "$(jq -r .spec.release.image <<<"$out")"
  check "HyperShift starts the control-plane update at once (model record)" wait_for "$(real_s "$TOL")" \
    model_more controlplane-initiation "$1/hc1" 0
  request_release "$(np_path "$1" np1)" "$REL1" >/dev/null
  check "a NodePool version change: Cluster API starts the rollout at once" wait_for "$(real_s "$TOL_ROLLOUT")" \
    model_more replacement-start "$1-hc1/np1" 0
}

# two_windows NS HC-POLICY NP-POLICY: the scenarios of a NodePool narrower
# or wider than its HostedCluster: policies "wide" (Saturday 00:00, 20m)
# and "narrow" (00:05, 5m), hc1 and its pool np1 (6 machines) following
# them, the controller and the model from Friday 23:48 at 100 times real
# time; a release and a NodePool version change held before 00:00.
two_windows() {
  local ns=$1
  must mk_policy "$ns" wide "$(weekly_policy Saturday 00:00 20m)" || return
  must mk_policy "$ns" narrow "$(weekly_policy Saturday 00:05 5m)" || return
  must mk_hc "$ns" hc1 "policy=$2" || return
  must model_np "$ns" np1 hc1 6 "policy=$3" || return
  model_scenario "$ns" 2026-03-06T23:48:00Z 100 hc1 --replacement-duration 90s || return
  check "the model created the MachineDeployment and its machines" wait_for 10 \
    model_machines "$ns-hc1/np1" 6
  EVENTUALLY=3 eventually "NodePool next window is the intersection" 2026-03-07T00:05:00Z/2026-03-07T00:10:00Z \
    np_cm "$ns" np1 '.next | "\(.startTime)/\(.endTime)"'
  release_held "a release" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  nodepool_held "a NodePool version change" "$(np_path "$ns" np1)" "$(md_path "$ns" hc1 np1)"
}

# NodePool narrower than its HostedCluster: the cluster's window
# (00:00-00:20) starts the control plane; the NodePool's change waits for
# its own (00:05-00:10) and is cut when it closes.
nodepool_narrower_than_cluster() {
  local ns md
  ns=$(new_ns narrower) || return
  md=$(md_path "$ns" hc1 np1)
  two_windows "$ns" wide narrow || return
  now_is "NodePool clusterConstraint is the cluster's window" 2026-03-07T00:00:00Z/2026-03-07T00:20:00Z \
    np_cm "$ns" np1 '.clusterConstraint | "\(.startTime)/\(.endTime)"'
  still_before a 2026-03-07T00:00:00Z "the held state"

  starts_at a "the control plane starts rolling in the cluster's window" 2026-03-07T00:00:00Z "$TOL" \
    controlplane-initiation "$ns/hc1"
  sleep 0.5
  now_is "no replacement inside the cluster's window only" 0 model_count replacement-start "$ns-hc1/np1"
  now_is "the template stays (the request held at the NodePool)" 4.17.0 md_version "$md"
  still_before a 2026-03-07T00:05:00Z "the NodePool's change still held"
  starts_at a "the first machine replacement in the NodePool's window" 2026-03-07T00:05:00Z "$TOL_ROLLOUT" \
    replacement-start "$ns-hc1/np1"
  rollout_cut a 2026-03-07T00:10:00Z "$md" "$ns-hc1/np1" 6
  now_is "Cluster still unpaused after the NodePool's window" unpaused pause_state "$(cluster_path "$ns" hc1)"
  still_before a 2026-03-07T00:20:00Z "the Cluster still unpaused"
}

# NodePool wider than its HostedCluster: its own window (00:00-00:20) opens
# first but its change waits for the cluster's (00:05-00:10), which also
# cuts its rollout.
nodepool_wider_than_cluster() {
  local ns md
  ns=$(new_ns wider) || return
  md=$(md_path "$ns" hc1 np1)
  two_windows "$ns" narrow wide || return
  still_before a 2026-03-07T00:00:00Z "the held state"

  sleep_until_sim a 2026-03-07T00:00:00Z 0.7
  now_is "no replacement inside its own window only" 0 model_count replacement-start "$ns-hc1/np1"
  now_is "the template stays (the request held at the NodePool)" 4.17.0 md_version "$md"
  now_is "no control-plane initiation" 0 model_count controlplane-initiation "$ns/hc1"
  now_is "NodePool says its HostedCluster restricts it" HostedClusterRestricted \
    cond "$(np_path "$ns" np1)" ChangesPaused reason
  check_contains "NodePool message names the HostedCluster" "its HostedCluster's does not" \
    "$(cond "$(np_path "$ns" np1)" ChangesPaused message)"
  still_before a 2026-03-07T00:05:00Z "the change held by the cluster"
  starts_at a "the control plane starts rolling" 2026-03-07T00:05:00Z "$TOL" controlplane-initiation "$ns/hc1"
  starts_at a "the first machine replacement" 2026-03-07T00:05:00Z "$TOL_ROLLOUT" replacement-start "$ns-hc1/np1"
  rollout_cut a 2026-03-07T00:10:00Z "$md" "$ns-hc1/np1" 6
  now_is "the NodePool says its HostedCluster restricts it again" HostedClusterRestricted \
    cond "$(np_path "$ns" np1)" ChangesPaused reason
  still_before a 2026-03-07T00:20:00Z "the rollout held inside the NodePool's own window"
}

# PermissiveUntil 23:57 then the policy (window Saturday 00:00-00:05):
# before 23:57 a release starts at once; after it, one is held until the
# policy's window.
permissive_until_back_to_policy() {
  local ns md
  ns=$(new_ns permuntil) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 strategy=PermissiveUntil permissive-until=2026-03-06T23:57:00Z policy=weekly || return
  must model_np "$ns" np1 hc1 2 || return
  md=$(md_path "$ns" hc1 np1)
  model_scenario "$ns" 2026-03-06T23:50:00Z 80 hc1 --replacement-duration 30s || return
  check "the model created the MachineDeployment and its machines" wait_for 10 \
    model_machines "$ns-hc1/np1" 2
  EVENTUALLY=3 eventually "HostedCluster ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted \
    hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "status strategy PermissiveUntil" PermissiveUntil hc_cm "$ns" hc1 .strategy
  now_is "status current ends at permissive-until" ChangesUnpaused/2026-03-06T23:57:00Z \
    hc_cm "$ns" hc1 '.current | "\(.state)/\(.endTime)"'
  check_contains "message says what follows" 'then policy "weekly"' \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "metric strategy_enabled{Permissive} 1 while the override is in force" 1 \
    obj_metric a change_management_strategy_enabled HostedCluster hc1 ',strategy="Permissive"'
  now_is "metric stanza_strategy{PermissiveUntil} 1" 1 \
    obj_metric a change_management_stanza_strategy HostedCluster hc1 ',strategy="PermissiveUntil"'
  goes_at_once "$ns"
  still_before a 2026-03-06T23:57:00Z "the permitted state"

  expect_at a "ChangesPaused=True when PermissiveUntil expires" 2026-03-06T23:57:00Z "$TOL" \
    is_eq True/OutsideMaintenanceWindow hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "metric strategy_enabled{MaintenanceSchedule} 1 once the policy took over" 1 \
    obj_metric a change_management_strategy_enabled HostedCluster hc1 ',strategy="MaintenanceSchedule"'
  now_is "status next is the policy's window" 2026-03-07T00:00:00Z/2026-03-07T00:05:00Z \
    hc_cm "$ns" hc1 '.next | "\(.startTime)/\(.endTime)"'
  local cp0 ms0
  cp0=$(model_count controlplane-initiation "$ns/hc1") ms0=$(model_count machineset-created "$ns-hc1/np1")
  release_held "after 23:57 a release" "$(hc_path "$ns" hc1)" "$REL2" "$REL1"
  request_release "$(np_path "$ns" np1)" "$REL2" >/dev/null
  still_before a 2026-03-07T00:00:00Z "the held state"
  starts_at a "the control plane starts rolling in the policy's window" 2026-03-07T00:00:00Z "$TOL" \
    controlplane-initiation "$ns/hc1" "$cp0"
  # Cluster API starts the rollout to the newest template with its MachineSet;
  # its first machine comes as soon as maxSurge allows, which may be after
  # the first rollout's (cut at 23:57) machines are ready.
  starts_at a "the second rollout starts in the policy's window (its MachineSet)" 2026-03-07T00:00:00Z \
    "$TOL_ROLLOUT" machineset-created "$ns-hc1/np1" "$ms0"
}

# RestrictiveUntil 23:54: then Permissive (no policy), or the policy (still
# closed) until an SRE switches to Permissive.
restrictive_until_then_permissive() {
  local ns md
  ns=$(new_ns restuntil) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 strategy=RestrictiveUntil restrictive-until=2026-03-06T23:54:00Z || return
  must mk_hc "$ns" hc2 strategy=RestrictiveUntil restrictive-until=2026-03-06T23:54:00Z policy=weekly || return
  must model_np "$ns" np1 hc1 2 || return
  md=$(md_path "$ns" hc1 np1)
  model_scenario "$ns" 2026-03-06T23:49:00Z 60 "hc1 hc2" --replacement-duration 1m || return
  check "the model created the MachineDeployment and its machines" wait_for 10 \
    model_machines "$ns-hc1/np1" 2
  EVENTUALLY=3 eventually "ChangesPaused=True (RestrictiveUntil)" True/RestrictiveUntil hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "message names the end" "until 2026-03-06T23:54:00Z" \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "status strategy RestrictiveUntil" RestrictiveUntil hc_cm "$ns" hc1 .strategy
  release_held "a release" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  release_held "a release to the cluster with a policy" "$(hc_path "$ns" hc2)" "$REL1" "$REL0"
  nodepool_held "a NodePool version change" "$(np_path "$ns" np1)" "$md"
  still_before a 2026-03-06T23:54:00Z "the restricted state"

  starts_at a "the control plane starts rolling when RestrictiveUntil expires" 2026-03-06T23:54:00Z "$TOL" \
    controlplane-initiation "$ns/hc1"
  starts_at a "so does the NodePool's rollout" 2026-03-06T23:54:00Z "$TOL_ROLLOUT" replacement-start "$ns-hc1/np1"
  eventually "status: permitted with no end" ChangesUnpaused/null hc_cm "$ns" hc1 '.current | "\(.state)/\(.endTime)"'
  now_is "status: no next change" null hc_cm "$ns" hc1 .next
  sleep 0.3
  now_is "the cluster with a policy: no initiation (its window is closed)" 0 \
    model_count controlplane-initiation "$ns/hc2"
  now_is "its ChangesPaused condition is True" True cond "$(hc_path "$ns" hc2)" ChangesPaused status
  check_contains "its ChangesPaused message gives the policy's window" "until 2026-03-07T00:00:00Z" \
    "$(cond "$(hc_path "$ns" hc2)" ChangesPaused message)"
  still_before a 2026-03-07T00:00:00Z "the policy's closed window"
  # The SRE switches it to Permissive: the held release goes at once.
  must api PATCH "$(hc_path "$ns" hc2)" \
    "{\"metadata\": {\"annotations\": {\"$CM/strategy\": \"Permissive\"}}}" || return
  check "strategy Permissive: HyperShift starts the held release (model record)" wait_for "$(real_s "$TOL")" \
    model_more controlplane-initiation "$ns/hc2" 0
  still_before a 2026-03-07T00:00:00Z "the initiation by strategy Permissive"
  now_is "the held release is applied" "$REL1" get "$(hc_path "$ns" hc2)" .spec.release.image
  eventually "status strategy Permissive" Permissive hc_cm "$ns" hc2 .strategy
}

# An exclusion on Saturday cuts Friday's 23:50-00:10 window at midnight.
exclusion_cuts_window() {
  local ns md
  ns=$(new_ns exclusion) || return
  must mk_policy "$ns" friday "$(weekly_policy Friday 23:50 20m \
    '[{"fromDate": "2026-03-07", "untilDate": "2026-03-08", "reason": "release freeze"}]')" || return
  must mk_hc "$ns" hc1 policy=friday || return
  must model_np "$ns" np1 hc1 6 policy=friday || return
  md=$(md_path "$ns" hc1 np1)
  model_scenario "$ns" 2026-03-06T23:37:00Z 150 hc1 --replacement-duration 3m || return
  check "the model created the MachineDeployment and its machines" wait_for 10 \
    model_machines "$ns-hc1/np1" 6
  EVENTUALLY=3 eventually "status next window ends at the exclusion" 2026-03-06T23:50:00Z/2026-03-07T00:00:00Z \
    hc_cm "$ns" hc1 '.next | "\(.startTime)/\(.endTime)"'
  release_held "a release" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  nodepool_held "a NodePool version change" "$(np_path "$ns" np1)" "$md"
  still_before a 2026-03-06T23:50:00Z "the held state"

  starts_at a "the control plane starts rolling" 2026-03-06T23:50:00Z "$TOL" controlplane-initiation "$ns/hc1"
  starts_at a "the first machine replacement" 2026-03-06T23:50:00Z "$TOL_ROLLOUT" replacement-start "$ns-hc1/np1"
  rollout_cut a 2026-03-07T00:00:00Z "$md" "$ns-hc1/np1" 6
  check_contains "HCMP status gives the exclusion's reason" "release freeze" \
    "$(get "$(hcmp_path "$ns" friday)" .status.behavior.current.reason)"
  eventually "HostedCluster ChangesPaused=True (Excluded)" True/Excluded hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "HostedCluster condition names the exclusion and its end" \
    'inside the exclusion "release freeze", which ends at 2026-03-08T00:00:00Z' \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  eventually "status next window is a week later" 2026-03-13T23:50:00Z hc_cm "$ns" hc1 .next.startTime
  local cp0
  cp0=$(model_count controlplane-initiation "$ns/hc1")
  release_held "a release inside the exclusion" "$(hc_path "$ns" hc1)" "$REL2" "$REL1"
  sleep_until_sim a 2026-03-07T00:10:00Z 1
  now_is "no control-plane initiation in the cut-off part (model record)" "$cp0" \
    model_count controlplane-initiation "$ns/hc1"
  none_after a "no replacement in the cut-off part (model record)" 2026-03-07T00:00:00Z \
    replacement-start "$ns-hc1/np1"
  now_is "the rollout still paused" paused+marker pause_state "$md"
}

model_suite_begin
[ "${E_CAPI:-}" = 1 ] && ROLLOUT_WAIT=90
run_scenario no_stanza_never_pauses
run_scenario bypolicy_weekly_window
run_scenario nodepool_narrower_than_cluster
run_scenario nodepool_wider_than_cluster
run_scenario permissive_until_back_to_policy
run_scenario restrictive_until_then_permissive
run_scenario exclusion_cuts_window
summary
