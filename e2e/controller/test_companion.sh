#!/usr/bin/env bash
# The state that HyperShift's CRDs prune lives on a HostedChangeManagementStatus
# per HostedCluster and NodePool (the fixtures prune status.changeManagement as
# the real CRDs do): after a window boundary it shows current, next and the
# history; `kubectl get hcms` shows target, state, next window and held change;
# a HostedCluster and a NodePool of the same name get one each; it goes when
# the stanza or the object goes; the boundary writes it once and steady state
# not at all. With the behaviour model writing HyperShift's own status
# (Status().Update of a HostedCluster from its cache, the patch helper's merge
# patch of a NodePool's conditions), our conditions survive and the
# controller writes nothing back; a whole-status update from a copy without
# our conditions gets them back.
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller and
# the model (e2e/model/build.sh, or HCP_MODEL_BIN). Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$(dirname "$0")/../model/lib.sh"

TOL=2.5
rv_of() { get "$1" .metadata.resourceVersion; }
echo_cond_sr() { echo "$(cond "$1" "$2" status)/$(cond "$1" "$2" reason)"; }

# A weekly window Saturday 00:00-00:05; the controller starts two simulated
# minutes before it at ten simulated seconds per second.
companion_follows_windows() {
  local ns hcs hcs_np np_same uid out
  ns=$(new_ns comp) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 5m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_hc "$ns" hc2 strategy=Restrictive || return
  must mk_np "$ns" np1 hc1 || return
  must mk_np "$ns" hc1 hc1 policy=weekly || return # a NodePool named like its HostedCluster
  hcs=$(hcms_path "$ns" hostedcluster hc1) hcs_np=$(hcms_path "$ns" nodepool np1)
  np_same=$(hcms_path "$ns" nodepool hc1)
  start_ctl a "$ns" 2026-03-06T23:58:00Z 10 || { not_ok "controller starts"; return; }
  EVENTUALLY=5 eventually "HostedCluster companion: paused until the window" \
    ChangesPaused/2026-03-07T00:00:00Z cm_status "$ns" hostedcluster hc1 '.current | "\(.state)/\(.endTime)"'
  now_is "its next window" ChangesUnpaused/2026-03-07T00:00:00Z/2026-03-07T00:05:00Z \
    cm_status "$ns" hostedcluster hc1 '.next | "\(.state)/\(.startTime)/\(.endTime)"'
  now_is "strategy as written, strategy in force, policy" ByPolicy/MaintenanceSchedule/weekly \
    cm_status "$ns" hostedcluster hc1 '"\(.strategy)/\(.strategyInForce)/\(.policy)"'
  now_is "history: one ongoing period" 1/ChangesPaused/null \
    cm_status "$ns" hostedcluster hc1 '.history | "\(length)/\(.[0].state)/\(.[0].endTime)"'
  uid=$(get "$(hc_path "$ns" hc1)" .metadata.uid)
  now_is "owned by the HostedCluster" "HostedCluster/hc1/$uid" \
    get "$hcs" '.metadata.ownerReferences[0] | "\(.kind)/\(.name)/\(.uid)"'
  now_is "target" HostedCluster/hc1 get "$hcs" '.target | "\(.kind)/\(.name)"'
  eventually "NodePool without a stanza of its own: companion (its cluster constrains it)" \
    None/hc1/2026-03-07T00:00:00Z cm_status "$ns" nodepool np1 \
    '"\(.strategy)/\(.clusterConstraint.hostedCluster)/\(.clusterConstraint.startTime)"'
  eventually "NodePool named like the HostedCluster: a companion of its own" NodePool/hc1 \
    get "$np_same" '.target | "\(.kind)/\(.name)"'
  now_is "... and the HostedCluster's is still its own" HostedCluster/hc1 get "$hcs" '.target | "\(.kind)/\(.name)"'
  now_is "no HyperShift object carries status.changeManagement" null/null \
    echo "$(get "$(hc_path "$ns" hc1)" .status.changeManagement)/$(get "$(np_path "$ns" np1)" .status.changeManagement)"
  now_is "ChangesPaused stays on the HostedCluster itself" True cond "$(hc_path "$ns" hc1)" ChangesPaused status
  still_before a 2026-03-07T00:00:00Z "the companion before the window"
  local rv0 rvnp0
  rv0=$(rv_of "$hcs") rvnp0=$(rv_of "$hcs_np")

  expect_at a "companion: in the window at 00:00" 2026-03-07T00:00:00Z "$TOL" \
    is_eq ChangesUnpaused cm_status "$ns" hostedcluster hc1 .current.state
  eventually "history: the window on top, the closed period ended at 00:00" \
    2/ChangesUnpaused/2026-03-07T00:00:00Z/ChangesPaused/2026-03-07T00:00:00Z \
    cm_status "$ns" hostedcluster hc1 \
    '.history | "\(length)/\(.[0].state)/\(.[0].startTime)/\(.[1].state)/\(.[1].endTime)"'
  now_is "next: paused from 00:05" ChangesPaused/2026-03-07T00:05:00Z \
    cm_status "$ns" hostedcluster hc1 '.next | "\(.state)/\(.startTime)"'
  out=$(k get hcms -n "$ns" 2>&1)
  check_contains "kubectl get hcms: the columns" "NAME KIND TARGET STRATEGY STATE NEXT CHANGE HELD AGE" \
    "$(echo "$out" | head -1 | tr -s ' ')"
  check_contains "kubectl get hcms: the HostedCluster's row" \
    "hostedcluster.hc1 HostedCluster hc1 MaintenanceSchedule ChangesUnpaused 2026-03-07T00:05:00Z" \
    "$(echo "$out" | tr -s ' ')"
  check_contains "kubectl get hcms: Restrictive hc2 never changes" \
    "hostedcluster.hc2 HostedCluster hc2 Restrictive ChangesPaused " "$(echo "$out" | tr -s ' ')"
  still_before a 2026-03-07T00:04:00Z "the companion in the window"
  # One write at the boundary, none in steady state: 20 simulated seconds
  # inside the window.
  local rv1 rvnp1
  rv1=$(rv_of "$hcs") rvnp1=$(rv_of "$hcs_np")
  check "the boundary rewrote the HostedCluster's companion" [ "$rv1" != "$rv0" ]
  check "... and the NodePool's" [ "$rvnp1" != "$rvnp0" ]
  sleep 2
  now_is "steady state: the HostedCluster's companion is not written again" "$rv1" rv_of "$hcs"
  now_is "steady state: nor the NodePool's" "$rvnp1" rv_of "$hcs_np"
  still_before a 2026-03-07T00:05:00Z "the steady state"

  # Someone edits a companion: the controller puts it back.
  must api PATCH "$hcs" '{"status": {"behavior": {"current": {"state": "ChangesPaused"}}}}' || return
  eventually "an edited companion is restored" ChangesUnpaused cm_status "$ns" hostedcluster hc1 .current.state
  # The stanza goes: so does the companion (the NodePool's own stays, the
  # one following only the cluster goes too).
  must api PATCH "$(hc_path "$ns" hc1)" "{\"metadata\": {\"annotations\": {\"$CM/policy\": null}}}" || return
  eventually "stanza removed: the HostedCluster's companion is deleted" NotFound get "$hcs" .reason
  eventually "... and that of the NodePool constrained by it only" NotFound get "$hcs_np" .reason
  now_is "the NodePool with a stanza of its own keeps its companion" NodePool get "$np_same" .target.kind
  # The HostedCluster goes: the test API server runs no garbage collector
  # (no kube-controller-manager), so this is the controller's own cleanup.
  must api DELETE "$(hc_path "$ns" hc2)" || return
  eventually "HostedCluster deleted: its companion is deleted" NotFound \
    get "$(hcms_path "$ns" hostedcluster hc2)" .reason
}

# The model writes HyperShift's status; our conditions survive, and the
# controller writes each object no more in steady state. Inside a long
# window (nothing paused, so the model's deletion of pauses plays no part).
conditions_survive_hypershift() {
  local ns s0 s1 w0 w1 t0 hc np
  ns=$(new_ns hsstatus) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 6h)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_np "$ns" np1 hc1 policy=weekly || return
  hc=$(hc_path "$ns" hc1) np=$(np_path "$ns" np1)
  start_ctl a "$ns" 2026-03-07T01:00:00Z 60 || { not_ok "controller starts"; return; }
  model_start "$ns" 2026-03-07T01:00:00Z 60 "${CTL_T0[a]}" || { not_ok "model starts"; return; }
  EVENTUALLY=8 eventually "HyperShift's ReconciliationActive on the HostedCluster" True \
    cond "$hc" ReconciliationActive status
  eventually "... and on the NodePool" True cond "$np" ReconciliationActive status
  eventually "our ChangesPaused on the HostedCluster" False/ChangesPermitted \
    echo_cond_sr "$hc" ChangesPaused
  eventually "... and on the NodePool" False/ChangesPermitted echo_cond_sr "$np" ChangesPaused
  sleep 1
  s0=$(model_summary) w0=$(metric a hcp_controller_writes_total)
  local ltt_hc ltt_np
  ltt_hc=$(cond "$hc" ChangesPaused lastTransitionTime) ltt_np=$(cond "$np" ChangesPaused lastTransitionTime)
  # Spec edits bump the generation: HyperShift writes its condition again.
  must api PATCH "$hc" '{"spec": {"nodeSelector": {"e2e": "edited"}}}' || return
  must api PATCH "$np" '{"spec": {"nodeDrainTimeout": "5m"}}' || return
  eventually "the model's Status().Update carries the new generation" 2 \
    cond "$hc" ReconciliationActive observedGeneration
  eventually "the model's NodePool patch too" 2 cond "$np" ReconciliationActive observedGeneration
  t0=$(now_us)
  sleep 5 # five simulated minutes of steady state
  now_is "ChangesPaused survives HyperShift's HostedCluster update, untouched" "False/$ltt_hc" \
    echo "$(cond "$hc" ChangesPaused status)/$(cond "$hc" ChangesPaused lastTransitionTime)"
  now_is "... and its NodePool patch" "False/$ltt_np" \
    echo "$(cond "$np" ChangesPaused status)/$(cond "$np" ChangesPaused lastTransitionTime)"
  now_is "ChangesPending survives too" False cond "$hc" ChangesPending status
  s1=$(model_summary) w1=$(metric a hcp_controller_writes_total)
  now_is "the controller wrote nothing in $((($(now_us) - t0) / 1000000)) s of steady state" "$w0" echo "$w1"
  # Per object: updates the model saw, less its own writes and the test's
  # spec edit, are the controller's.
  local k d
  for k in "HostedCluster $ns/hc1" "NodePool $ns/np1"; do
    d=$(jq -n --argjson a "$s0" --argjson b "$s1" --arg k "$k" \
      '(($b.observed[$k] // 0) - ($a.observed[$k] // 0)) - (($b.writes[$k] // 0) - ($a.writes[$k] // 0)) - 1')
    now_is "$k: controller writes in steady state with HyperShift writing its status (bound 0)" 0 echo "$d"
  done
  now_is "the model ran throughout" true echo "$(model_alive && echo true)"
  still_before a 2026-03-07T06:00:00Z "the steady state"
  # A whole-status update from a copy that lacks our conditions (a cache
  # from before they were written): ours come back, HyperShift's are kept.
  check "a whole-status update without our conditions is accepted" put_status_without_ours "$hc"
  eventually "ChangesPaused comes back" False/ChangesPermitted echo_cond_sr "$hc" ChangesPaused
  eventually "ChangesPending comes back" False/NoChangesPending echo_cond_sr "$hc" ChangesPending
  now_is "HyperShift's own conditions are kept" True/True \
    echo "$(cond "$hc" Available status)/$(cond "$hc" ReconciliationActive status)"
  model_stop
}

# put_status_without_ours PATH: PUTs the object's status without
# ChangesPaused and ChangesPending, with HyperShift's Available beside its
# ReconciliationActive (again on a conflict with the model's own write).
put_status_without_ours() {
  local obj try
  for try in 1 2 3; do
    obj=$(api GET "$1") || return 1
    obj=$(jq -c '.status.conditions |= (map(select(.type | IN("ChangesPaused", "ChangesPending", "Available") | not))
      + [{type: "Available", status: "True", reason: "AsExpected",
          message: "The hosted control plane is available", lastTransitionTime: "2026-03-01T00:00:00Z"}])' <<<"$obj")
    api PUT "$1/status" "$obj" application/json >/dev/null && return 0
  done
  return 1
}

begin_suite
run_scenario companion_follows_windows
run_scenario conditions_survive_hypershift
summary
