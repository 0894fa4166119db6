#!/usr/bin/env bash
# Controller scenarios about more than one run: two replicas with leader
# election (only the leader writes; the other takes over when the leader is
# killed), and a restart in the middle of a window that writes nothing.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

lease_holder() { get "/apis/coordination.k8s.io/v1/namespaces/$1/leases/$2" '.spec.holderIdentity // ""'; }

two_replicas_one_writer() {
  local ns c lead follow t_kill took holder
  ns=$(new_ns leader) || return
  must mk_hc "$ns" hc1 strategy=Restrictive || return
  must mk_np "$ns" np1 hc1 || return
  c=$(cluster_path "$ns" hc1)
  local le=(--leader-elect --leader-election-namespace "$ns" --leader-election-id ctl-e2e-lease)
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 "${le[@]}" || { not_ok "replica a starts"; return; }
  start_ctl b "$ns" 2026-03-06T12:00:00Z 1 "${le[@]}" || { not_ok "replica b starts"; return; }
  if wait_for 15 one_leader; then
    ok "exactly one replica leads ($(leaders))"
  else
    not_ok "exactly one replica leads" "hcp_controller_leader a/b = $(leaders)"
    return
  fi
  if [ "$(metric a hcp_controller_leader)" = 1 ]; then lead=a follow=b; else lead=b follow=a; fi
  eventually "the leader pauses the Cluster" paused+marker pause_state "$c"
  eventually "the leader pauses the MachineDeployment" paused+marker pause_state "$(md_path "$ns" hc1 np1)"
  holder=$(lease_holder "$ns" ctl-e2e-lease)
  check "the Lease names a holder ($holder)" [ -n "$holder" ]
  sleep 1
  now_is "the follower's hcp_controller_leader is 0" 0 metric "$follow" hcp_controller_leader
  now_is "the follower wrote nothing" 0 metric "$follow" hcp_controller_writes_total
  check "the leader wrote" lt 0 "$(metric "$lead" hcp_controller_writes_total)"
  # A stripped pause: re-asserted by the leader alone.
  must set_annotations "$c" "{\"$PAUSED_ANN\": null}" || return
  eventually "a stripped pause is re-asserted" paused+marker pause_state "$c"
  eventually "the leader counts the re-assertion" 1 metric "$lead" hcp_controller_pause_reassertions_total
  sleep 0.5
  now_is "the follower still wrote nothing" 0 metric "$follow" hcp_controller_writes_total
  now_is "the follower counted no re-assertion" 0 metric "$follow" hcp_controller_pause_reassertions_total

  # kill -9 the leader: the follower takes over when the Lease expires.
  stop_ctl "$lead" KILL
  t_kill=$(now_us)
  if wait_for 30 bash -c "[ \"\$(curl -sf http://127.0.0.1:${CTL_MPORT[$follow]}/metrics | awk '\$1 == \"hcp_controller_leader\" {print \$2}')\" = 1 ]"; then
    took=$((($(now_us) - t_kill) / 1000000))
    echo "# figure: failover after SIGKILL of the leader: $((($(now_us) - t_kill) / 1000)) ms (Lease 15 s, retry 2 s)"
    if [ "$took" -le 20 ]; then ok "the follower takes over ${took}s after the leader was killed"
    else not_ok "the follower takes over within 20 s" "took ${took}s"; fi
  else
    not_ok "the follower takes over after the leader was killed" "still not leading after 30 s"
    return
  fi
  check "the Lease names another holder" [ "$(lease_holder "$ns" ctl-e2e-lease)" != "$holder" ]
  # The new leader enforces: a stripped pause comes back, a strategy change
  # is carried out.
  must set_annotations "$c" "{\"$PAUSED_ANN\": null}" || return
  eventually "the new leader re-asserts a stripped pause" paused+marker pause_state "$c"
  eventually "the new leader counts it" 1 metric "$follow" hcp_controller_pause_reassertions_total
  must set_annotations "$(hc_path "$ns" hc1)" "{\"$CM/strategy\": \"Permissive\"}" || return
  eventually "the new leader unpauses the Cluster for strategy Permissive" unpaused pause_state "$c"
  eventually "and the MachineDeployment" unpaused pause_state "$(md_path "$ns" hc1 np1)"
  check "the new leader wrote" lt 0 "$(metric "$follow" hcp_controller_writes_total)"
  # SIGTERM: exit 0 and release the Lease.
  stop_ctl "$follow" TERM
  check_eq "SIGTERM exits 0" 0 "$CTL_RC"
  check "SIGTERM exits within 5 s (${CTL_STOP_MS} ms)" [ "$CTL_STOP_MS" -le 5000 ]
  now_is "the Lease is released on SIGTERM" "" lease_holder "$ns" ctl-e2e-lease
}

# resource_versions NS: the resourceVersion of every object of the scenario.
resource_versions() {
  local ns=$1 hc np
  for hc in hc1 hc2 hc3; do
    get "$(hc_path "$ns" $hc)" .metadata.resourceVersion
    get "$(cluster_path "$ns" $hc)" .metadata.resourceVersion
  done
  for np in np1:hc1 np2:hc2; do
    get "$(np_path "$ns" "${np%:*}")" .metadata.resourceVersion
    get "$(md_path "$ns" "${np#*:}" "${np%:*}")" .metadata.resourceVersion
  done
  get "$(hcmp_path "$ns" weekly)" .metadata.resourceVersion
}
writes_settled() {
  local w1 w2
  w1=$(metric "$1" hcp_controller_writes_total)
  sleep 1
  w2=$(metric "$1" hcp_controller_writes_total)
  [ -n "$w1" ] && [ "$w1" = "$w2" ]
}

restart_mid_window_zero_writes() {
  local ns rv1 rv2 t0 last
  ns=$(new_ns restart) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 1h)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_hc "$ns" hc2 strategy=Restrictive || return
  must mk_hc "$ns" hc3 || return
  must mk_np "$ns" np1 hc1 policy=weekly || return
  must mk_np "$ns" np2 hc2 || return
  t0=$(date +%s.%N)
  start_ctl a "$ns" 2026-03-07T00:10:00Z 10 || { not_ok "first run starts"; return; }
  eventually "first run: hc1 in its window" ChangesUnpaused cm_status "$ns" hostedcluster hc1 .current.state
  eventually "first run: hc2's Cluster paused" paused+marker pause_state "$(cluster_path "$ns" hc2)"
  eventually "first run: np2's MachineDeployment paused" paused+marker pause_state "$(md_path "$ns" hc2 np2)"
  eventually "first run: HCMP status written" True cond "$(hcmp_path "$ns" weekly)" Ready status
  check "first run: writes settle" wait_for 10 writes_settled a
  check "first run: wrote something" lt 0 "$(metric a hcp_controller_writes_total)"
  last=$(metric a hcp_controller_last_write_timestamp_seconds)
  in_range "first run: last write acknowledged during the run ($last)" "$last" "$t0" "$(date +%s.%N)"
  rv1=$(resource_versions "$ns" | tr '\n' ' ')
  stop_ctl a TERM
  check_eq "first run: SIGTERM exits 0" 0 "$CTL_RC"
  check "first run: SIGTERM exits within 5 s (${CTL_STOP_MS} ms)" [ "$CTL_STOP_MS" -le 5000 ]

  # Ten simulated minutes later, same window. Every change to the CAPI
  # objects and the NodePools is recorded.
  watch_start "$CAPI/namespaces/$ns-hc1/machinedeployments" "$CTL_TMP/w.md1"
  watch_start "$CAPI/namespaces/$ns-hc1/clusters" "$CTL_TMP/w.cl1"
  watch_start "$HS/namespaces/$ns/nodepools" "$CTL_TMP/w.np"
  sleep 0.3
  start_ctl b "$ns" 2026-03-07T00:20:00Z 10 || { not_ok "second run starts"; return; }
  sleep 3
  watch_stop
  still_before b 2026-03-07T01:00:00Z "the second run's convergence"
  now_is "second run: no failed writes" 0 metric b hcp_controller_write_errors_total
  now_is "second run: hc1's Cluster still unpaused" unpaused pause_state "$(cluster_path "$ns" hc1)"
  now_is "second run: np1's MachineDeployment still unpaused" unpaused pause_state "$(md_path "$ns" hc1 np1)"
  now_is "second run: hc2's Cluster still paused" paused+marker pause_state "$(cluster_path "$ns" hc2)"
  EVENTUALLY=0 check "second run: hcp_controller_writes_total stays 0" is_eq 0 metric b hcp_controller_writes_total
  EVENTUALLY=0 check "second run: no Events" is_eq 0 metric b hcp_controller_events_total
  now_is "second run: no write acknowledged (timestamp 0)" 0 metric b hcp_controller_last_write_timestamp_seconds
  rv2=$(resource_versions "$ns" | tr '\n' ' ')
  check "second run: no object changed" [ "$rv1" = "$rv2" ]
  check "second run: the open window's MachineDeployment was never paused" \
    bash -c "! grep -q '\"cluster.x-k8s.io/paused\"' '$CTL_TMP/w.md1'"
  check "second run: no NodePool status written" [ ! -s "$CTL_TMP/w.np" ]
  check "second run: the open window's Cluster was never touched" [ ! -s "$CTL_TMP/w.cl1" ]
}

begin_suite
run_scenario two_replicas_one_writer
run_scenario restart_mid_window_zero_writes
summary
