#!/usr/bin/env bash
# Controller scenarios about pauses it shares with other writers: a pause it
# did not set is never lifted, a pause another writer strips while changes are
# restricted is re-asserted (and counted), a MachineDeployment is paused
# only in mid-rollout (merely waiting, it stays unpaused so that Cluster API
# keeps scaling and remediating), and a control-plane update in progress is
# not paused when its window closes.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

TOL=2.5
hc_cond_sr() { echo "$(cond "$(hc_path "$1" "$2")" "$3" status)/$(cond "$(hc_path "$1" "$2")" "$3" reason)"; }
np_cond_sr() { echo "$(cond "$(np_path "$1" "$2")" "$3" status)/$(cond "$(np_path "$1" "$2")" "$3" reason)"; }
count_events() { events "$1" "$2" | grep -c "^$3\$"; }
# set_annotations PATH JSON: merge-patches metadata.annotations.
set_annotations() { api PATCH "$1" "{\"metadata\": {\"annotations\": $2}}" >/dev/null; }

# A pause without the controller's marker (set by a person or another tool)
# stays through a window, on the Cluster and on the MachineDeployment.
foreign_pause_never_lifted() {
  local ns c1 c2 md
  ns=$(new_ns foreign) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_hc "$ns" hc2 policy=weekly || return
  must mk_np "$ns" np1 hc1 || return
  c1=$(cluster_path "$ns" hc1) c2=$(cluster_path "$ns" hc2) md=$(md_path "$ns" hc1 np1)
  must set_annotations "$c1" "{\"$PAUSED_ANN\": \"true\"}" || return
  must set_annotations "$md" "{\"$PAUSED_ANN\": \"true\"}" || return
  start_ctl a "$ns" 2026-03-06T23:57:00Z 60 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "the other Cluster is paused by the controller" paused+marker pause_state "$c2"
  eventually "HostedCluster ChangesPaused=True" True/OutsideMaintenanceWindow hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "the foreign pause gets no marker" paused pause_state "$c1"
  now_is "the foreign MachineDeployment pause gets no marker" paused pause_state "$md"
  still_before a 2026-03-07T00:00:00Z "the paused state"

  expect_at a "the other Cluster unpaused" 2026-03-07T00:00:00Z "$TOL" is_state "$c2" unpaused
  eventually "ChangesPaused=True (PausedExternally) in the window" True/PausedExternally \
    hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "NodePool ChangesPaused=True (PausedExternally)" True/PausedExternally \
    np_cond_sr "$ns" np1 ChangesPaused
  sleep 0.5
  now_is "the foreign Cluster pause is not lifted in the window" paused pause_state "$c1"
  now_is "the foreign MachineDeployment pause is not lifted in the window" paused pause_state "$md"
  still_before a 2026-03-07T00:05:00Z "the foreign pauses in the window"
  # A pause whose marker names somebody else is not ours either.
  must set_annotations "$c1" "{\"$MARKER_ANN\": \"someone-else\"}" || return
  sleep 0.5
  now_is "a pause marked by somebody else is not lifted either" paused+someone-else pause_state "$c1"
  still_before a 2026-03-07T00:05:00Z "the pause marked by somebody else"
}

# A HyperShift-like writer strips the pause annotation while changes are
# restricted: it comes back, and hcp_controller_pause_reassertions_total
# counts it.
pause_stripped_reasserted() {
  local ns c md
  ns=$(new_ns strip) || return
  must mk_hc "$ns" hc1 strategy=Restrictive || return
  must mk_np "$ns" np1 hc1 strategy=Restrictive || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 || { not_ok "controller starts"; return; }
  eventually "Cluster paused with the marker" paused+marker pause_state "$c"
  eventually "MachineDeployment paused with the marker" paused+marker pause_state "$md"
  now_is "no re-assertion counted yet" 0 metric a hcp_controller_pause_reassertions_total

  must set_annotations "$c" "{\"$PAUSED_ANN\": null}" || return
  eventually "the stripped Cluster pause is re-asserted" paused+marker pause_state "$c"
  eventually "pause_reassertions_total 1" 1 metric a hcp_controller_pause_reassertions_total
  eventually "PauseReasserted Event for the HostedCluster" 1 count_events "$ns" hc1 PauseReasserted

  must set_annotations "$md" "{\"$PAUSED_ANN\": null}" || return
  eventually "the stripped MachineDeployment pause is re-asserted" paused+marker pause_state "$md"
  eventually "pause_reassertions_total 2" 2 metric a hcp_controller_pause_reassertions_total
  eventually "PauseReasserted Event for the NodePool" 1 count_events "$ns" np1 PauseReasserted

  # Stripped again, several times in a row: every one comes back.
  for _ in 1 2 3; do
    set_annotations "$c" "{\"$PAUSED_ANN\": null}"
    is_eq paused+marker pause_state "$c" || break
  done
  eventually "three more strips, three more re-assertions" 5 metric a hcp_controller_pause_reassertions_total
  # The pause and the marker both stripped: paused again too.
  must set_annotations "$c" "{\"$PAUSED_ANN\": null, \"$MARKER_ANN\": null}" || return
  eventually "a pause stripped with its marker is set again" paused+marker pause_state "$c"
  now_is "no write failed" 0 metric a hcp_controller_write_errors_total
}

# With the webhooks served (they hold a new template where it starts),
# restricted, a MachineDeployment merely waiting is not paused, and a pause
# of ours left from a rollout that has ended is lifted; once it is in
# mid-rollout it is paused; a pause that is not ours stays on an idle one.
# (Without the webhooks, the other scenarios, a restricted pool's
# MachineDeployment is paused throughout: the pause is the only brake.)
waiting_pool_not_paused() {
  local ns md st
  ns=$(new_ns waiting) || return
  must mk_hc "$ns" hc1 strategy=Restrictive || return
  must mk_np "$ns" np1 hc1 strategy=Restrictive || return
  md=$(md_path "$ns" hc1 np1) st=$(md_status_path "$ns" hc1 np1)
  must api PATCH "$st" "$(md_rollout_status 2 2)" >/dev/null || return
  must set_annotations "$md" "{\"$PAUSED_ANN\": \"true\", \"$MARKER_ANN\": \"hcp-controller\"}" || return
  must mk_webhook_cert || return
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 --webhook-bind-address "127.0.0.1:$(free_port)" \
    --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { not_ok "controller starts"; return; }
  eventually "NodePool ChangesPaused=True (Restrictive)" True/Restrictive np_cond_sr "$ns" np1 ChangesPaused
  eventually "restricted, not mid-rollout: our old pause is lifted" unpaused pause_state "$md"
  sleep 1
  now_is "and not set again" unpaused pause_state "$md"
  must api PATCH "$st" "$(md_rollout_status 3 1)" >/dev/null || return
  eventually "mid-rollout: paused with the marker" paused+marker pause_state "$md"
  must api PATCH "$st" "$(md_rollout_status 2 2)" >/dev/null || return
  eventually "the rollout done: the pause is lifted" unpaused pause_state "$md"
  must set_annotations "$md" "{\"$PAUSED_ANN\": \"true\"}" || return
  sleep 1
  now_is "a pause that is not ours stays" paused pause_state "$md"
}

# A control-plane update in progress (history[0].state Partial) keeps its
# Cluster unpaused when the window closes; the pause follows once it is done.
partial_update_not_paused() {
  local ns c1 c2
  ns=$(new_ns partial) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_hc "$ns" hc2 policy=weekly || return
  must set_hc_history "$ns" hc1 Partial || return
  c1=$(cluster_path "$ns" hc1) c2=$(cluster_path "$ns" hc2)
  start_ctl a "$ns" 2026-03-07T00:01:00Z 60 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "ChangesPending=True for the update in progress" True \
    cond "$(hc_path "$ns" hc1)" ChangesPending status
  now_is "its Cluster unpaused in the window" unpaused pause_state "$c1"
  now_is "the other Cluster unpaused in the window" unpaused pause_state "$c2"
  now_is "metric change_pending 1 (being initiated)" 1 obj_metric a change_management_change_pending HostedCluster hc1
  still_before a 2026-03-07T00:05:00Z "the open window"

  expect_at a "the other Cluster paused at window close" 2026-03-07T00:05:00Z "$TOL" is_state "$c2" paused+marker
  eventually "ChangesPaused=False (UpdateInProgress)" False/UpdateInProgress hc_cond_sr "$ns" hc1 ChangesPaused
  sleep 0.5
  now_is "the Cluster with the update in progress stays unpaused" unpaused pause_state "$c1"
  # The update completes: the pause follows.
  must set_hc_history "$ns" hc1 Completed || return
  eventually "Cluster paused once the update completed" paused+marker pause_state "$c1"
  eventually "ChangesPaused=True (OutsideMaintenanceWindow)" True/OutsideMaintenanceWindow \
    hc_cond_sr "$ns" hc1 ChangesPaused
}

begin_suite
run_scenario foreign_pause_never_lifted
run_scenario pause_stripped_reasserted
run_scenario waiting_pool_not_paused
run_scenario partial_update_not_paused
summary
