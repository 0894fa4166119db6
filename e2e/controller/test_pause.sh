#!/usr/bin/env bash
# Controller scenarios about pauses, beside the HyperShift / Cluster API
# behaviour model (e2e/model), which deletes cluster.x-k8s.io/paused from a
# NodePool's MachineDeployment on every NodePool reconcile as HyperShift
# does (nodepool/capi.go), and ignores the CAPI Cluster's pause for the
# control plane. Each shows what holds and what does not:
#
#   - a pause the controller did not set is never lifted: on the Cluster it
#     stays (and does not stop the control plane); on a MachineDeployment
#     HyperShift deletes it; HyperShift's own brake (NodePool
#     spec.pausedUntil) stays and holds its pool through the window;
#   - without the webhooks the pause is the only brake: HyperShift deletes
#     it, the controller re-asserts it (counted) and the two write in a loop;
#     a NodePool version change gets at most one replacement started in a
#     gap before the backstop's spec.paused stops the rollout and the loop
#     (until Cluster API reconciles in a gap, the pause holds it unstarted);
#   - with the webhooks a pool is paused only in mid-rollout: merely
#     waiting it is not, a rollout cut by the window's close is paused
#     through HyperShift's reconciles, resumes and completes in the next
#     permitted time, and once done is not paused again;
#   - a control-plane update under way is not interrupted when its window
#     closes; a release requested meanwhile is held.
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller
# and the model (e2e/model/build.sh, or HCP_MODEL_BIN). On the "capi"
# instance (CTL_E2E_INSTANCE=capi, make e2e-capi) Cluster API's own
# controllers make, roll and replace the machines instead of the model's
# Cluster API half; the waits below are sized for them. CTL_E2E_ONLY="fn ..."
# runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

TOL=2.5
TOL_ROLLOUT=4 # a rollout's first replacement: three writes after ours
# Real seconds a pool's machines take to come up, and a rollout to finish;
# the machines of waiting_pool_not_paused and the simulated seconds of its
# SRE's override (the model replaces a machine in about 1 s real here;
# Cluster API in about 17 s, one at a time).
MACHINES_WAIT=10 ROLLOUT_WAIT=5 WAITING_N=4 PERMIT=300
WH_NAME=hcp-e2e-pause-$$
# counter NAME METRIC: a counter of controller NAME as an integer.
counter() { local v; v=$(metric "$1" "$2"); echo "${v%.*}"; }
# others_writes S0 S1 KEY: the updates the model saw less its own writes
# (model_writes, e2e/model/lib.sh).
others_writes() { echo $(($(model_writes "$1" "$2" "$3" observed) - $(model_writes "$1" "$2" "$3"))); }

# A pause without the controller's marker stays through a window. On the
# Cluster it does not stop the control plane (HyperShift ignores it); on a
# MachineDeployment HyperShift deletes it at once; HyperShift's own brake,
# NodePool spec.pausedUntil, holds its pool.
foreign_pause_never_lifted() {
  local ns c1 c2 md1 md2 s0 s1
  ns=$(new_ns foreign) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_hc "$ns" hc2 policy=weekly || return
  must model_np "$ns" np1 hc1 2 || return
  must model_np "$ns" np2 hc1 2 || return
  c1=$(cluster_path "$ns" hc1) c2=$(cluster_path "$ns" hc2)
  md1=$(md_path "$ns" hc1 np1) md2=$(md_path "$ns" hc1 np2)
  model_scenario "$ns" 2026-03-06T23:54:00Z 60 "hc1 hc2" --replacement-duration 1m || return
  check "the model created the MachineDeployments and their machines" wait_for "$MACHINES_WAIT" \
    eval 'model_machines "$ns-hc1/np1" 2 && model_machines "$ns-hc1/np2" 2'
  # Somebody pauses the Cluster (HyperShift creates it beside Cluster API's
  # own controllers). Cluster API then stops reconciling the Cluster itself
  # only: its MachineDeployments and machines go on
  # (util/annotations.IsPaused asks the Cluster's spec.paused).
  must set_annotations "$c1" "{\"$PAUSED_ANN\": \"true\"}" || return
  must api PATCH "$(np_path "$ns" np2)" '{"spec": {"pausedUntil": "true"}}' || return
  EVENTUALLY=3 eventually "NodePool spec.pausedUntil: HyperShift pauses the MachineDeployment (no marker)" \
    paused pause_state "$md2"
  s0=$(model_summary)
  must set_annotations "$md1" "{\"$PAUSED_ANN\": \"true\"}" || return
  eventually "a pause put on a MachineDeployment: HyperShift deletes it" unpaused pause_state "$md1"
  s1=$(model_summary)
  if [ "${E_CAPI:-}" = 1 ]; then
    # Cluster API writes the MachineDeployment's status too, so its updates
    # cannot say who deleted the pause; HyperShift (the model) writes it only
    # to delete a pause it finds there.
    # The model counts its write once the API server answered it, which
    # can be a moment after the test read the pause gone.
    md1_written() { [ "$(model_writes "$s0" "$(model_summary)" "MachineDeployment $ns-hc1/np1")" -ge 1 ]; }
    check "... the model's write, not the controller's (HyperShift wrote it)" wait_for 5 md1_written
  else
    now_is "... the model's write, not the controller's (updates by others: the test's)" 1 \
      others_writes "$s0" "$s1" "MachineDeployment $ns-hc1/np1"
  fi
  # With the webhooks a Cluster carries our pause only while a release is
  # held (DESIGN.md 3.6).
  now_is "the other Cluster, restricted with nothing held, is not paused" unpaused pause_state "$c2"
  release_held "a release of the other HostedCluster" "$(hc_path "$ns" hc2)" "$REL1" "$REL0"
  eventually "the other Cluster is paused by the controller while its release is held" \
    paused+marker pause_state "$c2"
  eventually "HostedCluster ChangesPaused=True" True/OutsideMaintenanceWindow hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "the foreign Cluster pause gets no marker" paused pause_state "$c1"
  release_held "a release" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  nodepool_held "a version change of np1" "$(np_path "$ns" np1)" "$md1"
  request_release "$(np_path "$ns" np2)" "$REL1" >/dev/null
  still_before a 2026-03-07T00:00:00Z "the held state"

  expect_at a "the other Cluster unpaused" 2026-03-07T00:00:00Z "$TOL" is_state "$c2" unpaused
  starts_at a "HyperShift ignores the Cluster's pause: the control plane starts rolling" \
    2026-03-07T00:00:00Z "$TOL" controlplane-initiation "$ns/hc1"
  starts_at a "np1's rollout starts" 2026-03-07T00:00:00Z "$TOL_ROLLOUT" replacement-start "$ns-hc1/np1"
  eventually "ChangesPaused=True (PausedExternally) in the window" True/PausedExternally \
    hc_cond_sr "$ns" hc1 ChangesPaused
  echo "# with a pause on the Cluster that is not ours, the control plane rolling: ChangesPending $(hc_cond_sr "$ns" hc1 ChangesPending): $(cond "$(hc_path "$ns" hc1)" ChangesPending message)"
  # The Cluster's pause holds nothing of the control plane; the condition
  # still says the change waits for it.
  xfail "ChangesPending does not say the rolling control plane waits for the Cluster's pause" \
    eval '[ "$(hc_cond_sr "$ns" hc1 ChangesPending)" != True/ChangesBlocked ]'
  eventually "np2: ChangesPaused=True (PausedExternally)" True/PausedExternally \
    np_cond_sr "$ns" np2 ChangesPaused
  sleep 0.5
  now_is "the foreign Cluster pause is not lifted in the window" paused pause_state "$c1"
  now_is "np2's pause (spec.pausedUntil) is not lifted" paused pause_state "$md2"
  now_is "nor its spec.pausedUntil" true get "$(np_path "$ns" np2)" .spec.pausedUntil
  now_is "np2: HyperShift writes no new template" 4.17.0 md_version "$md2"
  now_is "np2: no rollout (model record)" 0 model_count replacement-start "$ns-hc1/np2"
  still_before a 2026-03-07T00:05:00Z "the foreign pauses in the window"
  # A pause whose marker names somebody else is not ours either.
  must set_annotations "$c1" "{\"$MARKER_ANN\": \"someone-else\"}" || return
  sleep 0.5
  now_is "a pause marked by somebody else is not lifted either" paused+someone-else pause_state "$c1"
  still_before a 2026-03-07T00:05:00Z "the pause marked by somebody else"
}

# Without the webhooks (none configured, the controller serves none) a
# restricted pool's MachineDeployment is paused throughout: HyperShift
# deletes the pause on every NodePool reconcile, the re-assertion is an
# event that makes it reconcile again: a write loop. A version change gets
# past once Cluster API reconciles the MachineDeployment in one of the gaps;
# the backstop's spec.paused, which HyperShift never writes, then stops the
# rollout and ends the loop. Until then the pause holds the new template
# unstarted (no MachineSet for it, no replacement) and the loop goes on:
# which comes first is a race between Cluster API's reconcile and the
# re-assertion, and under load the re-assertion can win for seconds on end.
pause_stripped_reasserted() {
  local ns c md r0 r1 w0 w1 s0 s1 rs unheld committed ms0 started stopped
  ns=$(new_ns strip) || return
  must mk_hc "$ns" hc1 strategy=Restrictive || return
  must model_np "$ns" np1 hc1 2 strategy=Restrictive || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  MODEL_WEBHOOKS=0 model_scenario "$ns" 2026-03-06T12:00:00Z 60 hc1 --replacement-duration 10m || return
  check "the model created the MachineDeployment and its machines" wait_for "$MACHINES_WAIT" \
    model_machines "$ns-hc1/np1" 2
  eventually "Cluster paused with the marker" paused+marker pause_state "$c"
  # The Cluster: HyperShift leaves its annotations alone; a person strips
  # the pause, it comes back.
  must set_annotations "$c" "{\"$PAUSED_ANN\": null}" || return
  eventually "the stripped Cluster pause is re-asserted" paused+marker pause_state "$c"
  eventually "PauseReasserted Event for the HostedCluster" 1 count_events "$ns" hc1 PauseReasserted
  must set_annotations "$c" "{\"$PAUSED_ANN\": null, \"$MARKER_ANN\": null}" || return
  eventually "a pause stripped with its marker is set again" paused+marker pause_state "$c"

  # The MachineDeployment: re-asserted, deleted by HyperShift, re-asserted...
  r0=$(counter a hcp_controller_pause_reassertions_total) w0=$(counter a hcp_controller_writes_total)
  s0=$(model_summary)
  sleep 3 # three simulated minutes, restricted, nothing requested
  r1=$(counter a hcp_controller_pause_reassertions_total) w1=$(counter a hcp_controller_writes_total)
  s1=$(model_summary)
  echo "# figure: without the webhooks, 3 s restricted and waiting: the controller re-asserted the MachineDeployment's pause $((r1 - r0)) times ($((w1 - w0)) writes), HyperShift (the model) wrote it $(model_writes "$s0" "$s1" "MachineDeployment $ns-hc1/np1") times; now $(pause_state "$md")"
  check "the pause HyperShift deletes is re-asserted" [ "$((r1 - r0))" -ge 1 ]
  check "PauseReasserted Events for the NodePool" [ "$(count_events "$ns" np1 PauseReasserted)" -ge 1 ]
  xfail "no write loop with HyperShift without the webhooks (at most 3 re-assertions in 3 s)" \
    [ "$((r1 - r0))" -le 3 ]
  now_is "no rollout while nothing is requested" 0 model_count replacement-start "$ns-hc1/np1"

  # A version change: HyperShift's template write goes through (no webhook).
  ms0=$(model_count machineset-created "$ns-hc1/np1")
  request_release "$(np_path "$ns" np1)" "$REL1" >/dev/null
  check "HyperShift writes the new template (no webhook holds the NodePool)" \
    wait_for 5 eval '[ "$(md_version "$md")" = 4.17.1 ]'
  rollout_stopped() { [ "$(get "$md" '"\(.spec.paused // false) \(.metadata.annotations["changemanagement.hypershift.openshift.io/spec-paused-by"] // "-")"')" = "true hcp-controller" ]; }
  stopped=no
  wait_for 5 rollout_stopped && stopped=yes
  rs=$(model_count replacement-start "$ns-hc1/np1")
  started=$(($(model_count machineset-created "$ns-hc1/np1") - ms0))
  # A rollout started late in those 5 s: the backstop gets its 5 s too.
  if [ "$stopped" = no ] && [ "$started" != 0 -o "$rs" != 0 ]; then
    wait_for 5 rollout_stopped && stopped=yes
    rs=$(model_count replacement-start "$ns-hc1/np1")
  fi
  unheld=$(counter a 'change_management_unheld_changes_total\{kind="NodePool",system="worker-nodes"\}')
  echo "# figure: without the webhooks, a version change while restricted: spec.paused after 5 s: $stopped; MachineSets made for it: $started; $rs replacement(s) started before spec.paused stopped the rollout; counted as not held: $unheld"
  # Either Cluster API made the new MachineSet in a gap and the backstop
  # stopped the rollout, or it has not yet: then the pause still holds the
  # template unstarted, and the rollout may yet start in a later gap (at
  # most one replacement before spec.paused, as above).
  check "the backstop stops the rollout (spec.paused with our marker), or the pause kept Cluster API from starting it (no MachineSet, no replacement)" \
    eval '[ "$stopped" = yes ] || [ "$started" = 0 -a "$rs" = 0 ]'
  in_range "at most one replacement started in the gap" "$rs" 0 1
  # The watch may see the rollout only with the pause re-asserted on it:
  # then it is stopped but not counted.
  xfail "a replacement started while restricted is counted as not held" [ "$rs" -le "${unheld:-0}" ]
  committed=$(committed_machines "$ns-hc1" np1)
  in_range "at most one committed to (the new MachineSet's replicas)" "$committed" 0 1
  [ "$committed" -gt "$rs" ] 2>/dev/null && rs=$committed
  [ "$stopped" = no ] && rs=1
  r0=$(counter a hcp_controller_pause_reassertions_total)
  sleep 2
  r1=$(counter a hcp_controller_pause_reassertions_total)
  if [ "$stopped" = yes ]; then
    now_is "with spec.paused the loop ends: no re-assertion in 2 s" 0 echo $((r1 - r0))
  else
    xfail "the loop ends before Cluster API starts the rollout: no re-assertion in 2 s" [ "$((r1 - r0))" = 0 ]
  fi
  in_range "no other replacement started (than those started or committed to before)" \
    "$(model_count replacement-start "$ns-hc1/np1")" 0 "$rs"
  now_is "no write failed" 0 metric a hcp_controller_write_errors_total
}

# With the webhooks, a MachineDeployment is paused only in mid-rollout.
# Merely waiting with a change held it is not (a pause of ours left from an
# earlier rollout does not stay); a rollout cut by the window's close is
# paused through HyperShift's reconciles, resumes in the next permitted time
# (an SRE's PermissiveUntil) and completes, and is not paused once done.
waiting_pool_not_paused() {
  local ns md r0 s0 s1 until rs0 rd0
  ns=$(new_ns waiting) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 4m)" || return
  must mk_hc "$ns" hc1 || return
  must model_np "$ns" np1 hc1 "$WAITING_N" policy=weekly || return
  md=$(md_path "$ns" hc1 np1)
  model_scenario "$ns" 2026-03-06T23:52:00Z 120 hc1 --replacement-duration 90s || return
  check "the model created the MachineDeployment and its machines" wait_for "$MACHINES_WAIT" \
    model_machines "$ns-hc1/np1" "$WAITING_N"
  must set_annotations "$md" "{\"$PAUSED_ANN\": \"true\", \"$MARKER_ANN\": \"hcp-controller\"}" || return
  EVENTUALLY=3 eventually "NodePool ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    np_cond_sr "$ns" np1 ChangesPaused
  eventually "restricted, not mid-rollout: an old pause of ours does not stay" unpaused pause_state "$md"
  nodepool_held "a version change" "$(np_path "$ns" np1)" "$md"
  now_is "merely waiting with the change held: not paused" unpaused pause_state "$md"
  still_before a 2026-03-07T00:00:00Z "the waiting state"

  starts_at a "the rollout starts" 2026-03-07T00:00:00Z "$TOL_ROLLOUT" replacement-start "$ns-hc1/np1"
  expect_at a "the window closes mid-rollout: paused with the marker" 2026-03-07T00:04:00Z "$TOL" \
    is_state "$md" paused+marker
  # HyperShift reconciles the pool (a spec edit) and deletes the pause in
  # its write; the webhook keeps it: no gap, no re-assertion.
  r0=$(counter a hcp_controller_pause_reassertions_total) s0=$(model_summary)
  must api PATCH "$(np_path "$ns" np1)" '{"spec": {"nodeDrainTimeout": "5m"}}' || return
  sleep 1.5
  s1=$(model_summary)
  check "HyperShift wrote the MachineDeployment (deleting the pause)" \
    [ "$(model_writes "$s0" "$s1" "MachineDeployment $ns-hc1/np1")" -ge 1 ]
  now_is "the pause stays through HyperShift's reconcile" paused+marker pause_state "$md"
  now_is "no re-assertion needed" "$r0" counter a hcp_controller_pause_reassertions_total
  none_after a "no replacement starts more than 1 s after the close (model record)" 2026-03-07T00:04:00Z \
    replacement-start "$ns-hc1/np1"
  rs0=$(model_count replacement-start "$ns-hc1/np1") rd0=$(model_count replacement-done "$ns-hc1/np1")
  check "the pause cut the rollout: replacements done $rd0 of $WAITING_N" test "$rd0" -lt "$WAITING_N"
  # An SRE opens changes for a while (five simulated minutes, forty beside
  # Cluster API's own controllers; the policy stays).
  until=$(rfc3339 $(($(sim_hi a | cut -d. -f1) + PERMIT)))
  must api PATCH "$(np_path "$ns" np1)" "{\"metadata\": {\"annotations\": {\"$CM/strategy\": \"PermissiveUntil\",
    \"$CM/permissive-until\": \"$until\"}}}" || return
  eventually "PermissiveUntil: the pause is lifted" unpaused pause_state "$md"
  # It goes on: a replacement more starts, or (when every replacement had
  # started before the close, as Cluster API may on a slow clock) one more
  # is done, which the paused MachineDeployment did not allow (the old
  # MachineSet is scaled down by it).
  resumed() { model_more replacement-start "$ns-hc1/np1" "$rs0" || model_more replacement-done "$ns-hc1/np1" "$rd0"; }
  check "the rollout resumes" wait_for "$ROLLOUT_WAIT" resumed
  check "and completes" wait_for "$ROLLOUT_WAIT" \
    eval '[ "$(model_count replacement-done "$ns-hc1/np1")" -ge "$WAITING_N" ]'
  still_before a "$until" "the rollout completed"
  sleep_until_sim a "$until" 1
  now_is "restricted again, the rollout done: not paused" unpaused pause_state "$md"
  now_is "the NodePool is restricted" True cond "$(np_path "$ns" np1)" ChangesPaused status
}

# A control-plane update under way (HyperShift's history Partial) keeps its
# Cluster unpaused when the window closes, and is not interrupted; a release
# requested meanwhile is held; the pause follows once the update completes.
partial_update_not_paused() {
  local ns c1 c2 hcp
  ns=$(new_ns partial) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_hc "$ns" hc2 policy=weekly || return
  c1=$(cluster_path "$ns" hc1) c2=$(cluster_path "$ns" hc2)
  hcp=/api/v1/namespaces/$ns-hc1/configmaps/hc1
  model_scenario "$ns" 2026-03-06T23:55:00Z 120 "hc1 hc2" --hc-status --controlplane-update-duration 8m || return
  EVENTUALLY=3 eventually "ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    hc_cond_sr "$ns" hc1 ChangesPaused
  release_held "a release" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  still_before a 2026-03-07T00:00:00Z "the held state"

  starts_at a "the control plane starts rolling" 2026-03-07T00:00:00Z "$TOL" controlplane-initiation "$ns/hc1"
  eventually "HyperShift reports the update in progress (history Partial)" Partial \
    get "$(hc_path "$ns" hc1)" '.status.version.history[0].state'
  now_is "metric change_pending 1 (being initiated)" 1 obj_metric a change_management_change_pending HostedCluster hc1
  now_is "its Cluster unpaused in the window" unpaused pause_state "$c1"
  still_before a 2026-03-07T00:05:00Z "the open window"

  sleep_until_sim a 2026-03-07T00:05:00Z 1
  now_is "the other Cluster, nothing held, is not paused at window close (the webhooks hold releases)" \
    unpaused pause_state "$c2"
  # In progress for the update's 8 simulated minutes from the opening: a
  # check begun by 00:07 sees it.
  eventually_before a 2026-03-07T00:07:00Z "ChangesPaused=False (UpdateInProgress)" False/UpdateInProgress \
    hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "the Cluster with the update in progress stays unpaused" unpaused pause_state "$c1"
  now_is "the update is not interrupted: the control plane runs to 4.17.1" "$REL1" get "$hcp" .data.releaseImage
  release_held "a release during the update, after the close" "$(hc_path "$ns" hc1)" "$REL2" "$REL1"
  # The update completes (8 simulated minutes): the pause follows.
  EVENTUALLY=8 eventually "HyperShift completes the update" Completed \
    get "$(hc_path "$ns" hc1)" '.status.version.history[0].state'
  eventually "Cluster paused once the update completed" paused+marker pause_state "$c1"
  eventually "ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "no initiation to the release requested after the close (model record)" "" \
    model_to controlplane-initiation "$ns/hc1" "$REL2"
}

model_suite_begin
# (the instance's environment, E_CAPI, is read by model_suite_begin)
if [ "${E_CAPI:-}" = 1 ]; then MACHINES_WAIT=40 ROLLOUT_WAIT=90 WAITING_N=3 PERMIT=2400; fi
run_scenario foreign_pause_never_lifted
run_scenario pause_stripped_reasserted
run_scenario waiting_pool_not_paused
run_scenario partial_update_not_paused
summary
