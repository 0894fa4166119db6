# shellcheck shell=bash
# The act on Cluster API's own controllers (DEMO_SCENARIO=capi; sourced by
# e2e/demo/demo.sh; `make demo` runs it after the week): one HostedCluster,
# edge, with a Replace NodePool of two workers (e2e/demo/objects-capi/), on
# the "capi" instance, where Cluster API's core manager and its in-memory
# infrastructure provider make, roll and delete the machines, and the model
# plays only HyperShift (and the control-plane provider). Real Cluster API
# takes its own real time (about 11 s per machine replaced here), so the
# clock runs 240 times real time, not a week's 5,040: a simulated hour is 15
# real seconds. From Saturday 2026-03-07 00:00 UTC: at 00:30 someone asks for
# release 4.17.1 for edge and for edge-workers, and both are held; the
# window opens at 02:00, the control plane updates (10 simulated minutes),
# then Cluster API replaces the two machines one at a time. The act ends
# when both are replaced (about a minute of real time), or at the window's
# close at 06:00.

SCENARIO_INSTANCE=capi
OBJECTS=$here/objects-capi
DEMO_CLUSTERS=(edge)
DEMO_SOURCE="Cluster API"
# scenario_updates HC: no update service (nothing to recheck at the window).
scenario_updates() { echo null; }
# scenario_helm RECEIVER: nothing beyond the notification endpoint.
scenario_helm() { SCENARIO_HELM_SETS=(); }
SOURCE_WORDS=$'the model of HyperShift and\n   Cluster API\'s own controllers'
SIM_START=2026-03-07T00:00:00Z  # a Saturday
REQUEST_AT=2026-03-07T00:30:00Z # the requests, held
CLOSE_AT=2026-03-07T06:00:00Z   # the window's close: the act ends by then
SCALE=240.000
MODEL_FLAGS=(--real-capi --controlplane-update-duration 10m)
CAPI_REPLICAS=2 # edge-workers' machines, each replaced once

scenario_check() {
  [ "${E_CAPI:-}" = 1 ] ||
    die "instance \"$INSTANCE\" runs no Cluster API controllers; the act needs one (e2e/cluster.sh with capi --, or make demo)"
}

scenario_span() {
  SIM_END=$CLOSE_AT
  DEMO_SECONDS=$(awk -v a="$(date -u -d "$SIM_START" +%s)" -v b="$(date -u -d "$SIM_END" +%s)" -v k="$SCALE" \
    'BEGIN { printf "%d", (b - a) / k }')
}

scenario_title() {
  echo "== hcp-controller demo on Cluster API's own controllers: $(fmt_time "$SIM_START") UTC until the rollout"
  echo "   is done (at the latest $(fmt_time "$SIM_END"))"
}

scenario_seeded() { echo "the control plane runs 4.17.0"; }

# scenario_reset: Cluster API's objects of an earlier run on the same
# instance (one started afresh has none). Its cluster controller deletes a
# Cluster's machines, MachineSets and MachineDeployments before the
# Cluster itself.
scenario_reset() {
  local cp
  for cp in "${CP_NS[@]}"; do
    k delete clusters.cluster.x-k8s.io --all -n "$cp" --wait --timeout 120s >/dev/null 2>"$DEMO_DIR/kubectl.err" ||
      die "deleting the Cluster API objects of an earlier run in $cp failed: $(cat "$DEMO_DIR/kubectl.err")"
    k delete machinedeployments.cluster.x-k8s.io,machinesets.cluster.x-k8s.io,machines.cluster.x-k8s.io \
      --all -n "$cp" --wait --timeout 60s >/dev/null 2>"$DEMO_DIR/kubectl.err" ||
      die "deleting the machines of an earlier run in $cp failed: $(cat "$DEMO_DIR/kubectl.err")"
  done
}

# scenario_machines NAMESPACE: the pools' Machines there (not the
# control-plane stand-in), one JSON object a line, shaped as the week's:
# their labels, data.version (spec.version).
scenario_machines() {
  k get machines.cluster.x-k8s.io -n "$1" -o json 2>/dev/null |
    jq -c '.items[] | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] != null) |
      {metadata: {namespace: .metadata.namespace, labels: .metadata.labels}, data: {version: .spec.version}}'
}

# rollout_done: every machine of edge-workers replaced (the model's record
# of the real Machines: a machine of the old template deleted while a newer
# one exists).
rollout_done() {
  jq -e -s --arg o "$NS-edge/edge-workers" --argjson n "$CAPI_REPLICAS" \
    '[.[] | select(.event == "replacement-done" and .object == $o)] | length >= $n' \
    "$MODEL_REC" >/dev/null 2>&1
}

# sim_before EPOCH: the simulated clock has not reached EPOCH yet.
sim_before() {
  awk -v s="$SIM_START_EPOCH" -v t="${EPOCHREALTIME/./}" -v t0="$T_LAUNCH" -v k="$SCALE" \
    -v e="$1" 'BEGIN { exit !(s + (t - t0) / 1e6 * k < e) }'
}

# scenario_run: the requests at REQUEST_AT, then until the rollout is done
# or the window closes. The loop is where a SIGTERM (Ctrl-C's twin, or a
# test stopping the act) finds the script, so it has no command
# substitution: bash 5.2 runs a trap that arrives while it parses one in the
# middle of that parse, and the trap then fails ("unexpected EOF while
# looking for matching `)'") instead of cleaning up and exiting 143. It
# waits in `wait` (sleep_in_wait), tests by exit status, and reads the clock
# from EPOCHREALTIME.
scenario_run() {
  local end
  sleep_until_instant "$REQUEST_AT"
  ask_release HostedCluster edge
  ask_release NodePool edge-workers
  requests_answered
  end=$(date -u -d "$SIM_END" +%s) SIM_START_EPOCH=$(date -u -d "$SIM_START" +%s)
  while ! rollout_done && sim_before "$end"; do
    alive
    sleep_in_wait 0.2
  done
  # The controller's and HyperShift's writes after the last replacement.
  sleep 1
  SIM_END=$(date -u -d "@$(demo_sim_now)" +%Y-%m-%dT%H:%M:%SZ)
}
