# shellcheck shell=bash
# The week (DEMO_SCENARIO=week, the default; sourced by e2e/demo/demo.sh):
# two HostedClusters and four NodePools (e2e/demo/objects/) from Monday
# 2026-03-02 00:00 UTC for DEMO_DAYS simulated days in about DEMO_SECONDS
# real seconds, on the "main" instance, where the behaviour model plays
# both HyperShift and Cluster API: real Cluster API cannot keep a week's
# pace (about 13 real seconds per machine replacement would be 18
# simulated hours here); scenario-capi.sh is the act on its own
# controllers. On Tuesday at 12:30 someone asks for release 4.17.1 for
# prod and staging and for prod-workers and prod-infra, and for a new
# configuration of the InPlace pool staging-gpu; staging is Degraded from
# Tuesday 19:00 to Wednesday 09:00. On Wednesday at 10:00 prod-infra's
# request is reverted in Git: the GitOps tool (Argo CD's controller, by
# server-side apply) applies 4.17.0 again, which withdraws it, and nothing
# starts for prod-infra at its weekend windows.
#
# Seed 004's last rows, one of each. A change board's pre-start check
# (the guard rails' `checks`, asked about node changes; the demo's
# receiver) says no once: to staging-gpu's configuration before Tuesday
# night's window, which holds it (CheckFailed) until the check is asked
# again (1 s real, about an hour simulated) and says yes. staging's update
# service (status.version, as HyperShift copies it from the hosted
# cluster's ClusterVersion) offers 4.17.1 until Wednesday noon, when it is
# pulled for a risk (conditionalUpdates, Recommended False): at Wednesday
# night's window it is still held (ReleaseNotRecommended, release-withdrawn)
# and goes when it is offered again on Thursday at 00:30. Once HyperShift
# reports it completed, staging is Degraded from 01:15 to 02:15: longer than
# the grace time (15m here; the settle time 2h) is told as unhealthy after
# the change (a condition, an Event, unhealthy-after-change).

DEMO_SECONDS=${DEMO_SECONDS:-120}
DEMO_DAYS=${DEMO_DAYS:-7}
SCENARIO_INSTANCE=main
OBJECTS=$here/objects
DEMO_CLUSTERS=(prod staging)
DEMO_SOURCE=model
SOURCE_WORDS=$'the model of HyperShift and\n   Cluster API'
SIM_START=2026-03-02T00:00:00Z # a Monday
REQUEST_AT=2026-03-03T12:30:00Z # Tuesday, after staging's override: the requests
DEGRADED_AT=2026-03-03T19:00:00Z # staging turns Degraded before Tuesday night's window
HEALTHY_AT=2026-03-04T09:00:00Z  # and is healthy again on Wednesday morning
REVERT_AT=2026-03-04T10:00:00Z   # prod-infra's request reverted in Git
PULL_AT=2026-03-04T12:00:00Z     # 4.17.1 pulled from staging's update graph
OFFER_AT=2026-03-05T00:30:00Z    # and offered again, inside Thursday night's window
AFTER_DEGRADED_AT=2026-03-05T01:15:00Z # staging Degraded after its update completed
AFTER_HEALTHY_AT=2026-03-05T02:15:00Z  # and healthy again
RISK=OVNKubeNodeRestarts RISK_URL=https://issues.redhat.com/browse/OCPBUGS-00000
GITOPS=system:serviceaccount:openshift-gitops:openshift-gitops-argocd-application-controller
GPU_CONFIG='[{"name": "gpu-driver-550"}]' # staging-gpu's new spec.config
REPLACEMENT=10m # simulated time the model takes per machine replacement
# prod's control plane (window at 01:00 Saturday) completes in 10 simulated
# minutes, well before prod-workers' window at 02:00 even on a loaded
# machine (a simulated hour is 0.7 s here): the pool then starts at its
# window, not when the control plane catches up (a hold the demo would show).
MODEL_FLAGS=(--controlplane-update-duration 10m --replacement-duration "$REPLACEMENT")

# scenario_updates HC: what HC's update service offers at the start:
# staging has one (4.17.1); prod has none (the recheck cannot judge it).
scenario_updates() {
  if [ "$1" = staging ]; then
    jq -nc --arg i "$RELEASE_NEXT" '[{version: "4.17.1", image: $i}]'
  else
    echo null
  fi
}

# scenario_helm RECEIVER: the guard rails' settings of the week, as chart
# values: the change board's check (the receiver's /check), asked about the
# node changes, and the health after a change watched for 2h with 15m grace.
scenario_helm() {
  SCENARIO_HELM_SETS=(--set "checks[0].name=change-board" --set "checks[0].url=$1/check"
    --set "checks[0].systems[0]=worker-nodes" --set "checks[0].timeout=5s"
    --set guardRails.afterChangeSettle=2h --set guardRails.afterChangeGrace=15m)
}

scenario_check() {
  { [[ "$DEMO_SECONDS" =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v s="$DEMO_SECONDS" 'BEGIN { exit !(s >= 5) }'; } ||
    die "DEMO_SECONDS \"$DEMO_SECONDS\" is not a number of seconds >= 5"
  { [[ "$DEMO_DAYS" =~ ^[1-9][0-9]*$ ]] && [ "$DEMO_DAYS" -ge 2 ] && [ "$DEMO_DAYS" -le 28 ]; } ||
    die "DEMO_DAYS \"$DEMO_DAYS\" is not a whole number of days from 2 to 28"
  [ "${E_CAPI:-}" != 1 ] ||
    die "instance \"$INSTANCE\" runs Cluster API's own controllers, which cannot keep the week's pace; run the week on \"main\" (DEMO_SCENARIO=capi is the act for this one)"
}

scenario_span() {
  SCALE=$(awk -v d="$DEMO_DAYS" -v s="$DEMO_SECONDS" 'BEGIN { printf "%.3f", d * 86400 / s }')
  SIM_END=$(date -u -d "$SIM_START + $DEMO_DAYS days" +%Y-%m-%dT%H:%M:%SZ)
}

scenario_title() {
  echo "== hcp-controller demo: $DEMO_DAYS simulated days ($(fmt_time "$SIM_START") to $(fmt_time "$SIM_END") UTC)"
}

scenario_seeded() { echo "both control planes run 4.17.0"; }

# scenario_reset: what the model created in the control-plane namespaces.
scenario_reset() {
  local cp
  for cp in "${CP_NS[@]}"; do
    k delete machinedeployments.cluster.x-k8s.io,machinesets.cluster.x-k8s.io --all -n "$cp" >/dev/null 2>&1 || true
    k delete configmaps -l e2e-model.hcp-controller/role -n "$cp" >/dev/null 2>&1 || true
  done
}

# scenario_machines NAMESPACE: the pools' machines there, one JSON object
# a line, with the labels of their MachineDeployment or MachineSet and
# data.version and data.config (the model keeps them in ConfigMaps).
scenario_machines() {
  k get configmaps -n "$1" -l e2e-model.hcp-controller/role=machine -o json 2>/dev/null | jq -c '.items[]'
}

# sleep_until_day D: until the simulated clock has passed day D (the
# clocks started at T_LAUNCH; the controller's a few milliseconds later).
sleep_until_day() {
  local d
  d=$(awk -v n="$1" -v k="$SCALE" -v t0="$T_LAUNCH" -v t="$(now_us)" \
    'BEGIN { d = n * 86400 / k - (t - t0) / 1e6; printf "%.3f", (d > 0 ? d : 0) }')
  sleep_in_wait "$d"
}

# The requests, on Tuesday at REQUEST_AT (between day 1 and day 2).
requests() {
  sleep_until_instant "$REQUEST_AT"
  # Four people at once: each answer comes back on its own.
  ask_release HostedCluster prod
  ask_release HostedCluster staging
  ask_release NodePool prod-workers
  ask_release NodePool prod-infra
  send_request NodePool nodepools staging-gpu "{\"spec\": {\"config\": $GPU_CONFIG}}" \
    "someone asks for a new configuration (gpu-driver-550) for the nodes (InPlace)" &
  REQUEST_PIDS+=($!)
  requests_answered
}

# revert: at REVERT_AT, prod-infra's request reverted in Git: the GitOps
# tool's server-side apply of the running release (Argo CD's field manager,
# as its ServiceAccount) withdraws it (DESIGN.md 3.13).
revert() {
  sleep_until_instant "$REVERT_AT"
  REQUEST_APPLY=argocd-controller REQUEST_AS=$GITOPS send_request NodePool nodepools prod-infra \
    "$(jq -nc --arg ns "$NS" --arg i "$RELEASE_DONE" '{apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "NodePool", metadata: {name: "prod-infra", namespace: $ns}, spec: {release: {image: $i}}}')" \
    "Git reverts prod-infra's release: the GitOps tool applies 4.17.0 again"
}

# health AT DEGRADED REASON TEXT: at simulated instant AT, HyperShift
# reports staging Degraded (or not), printed as it happens.
health() {
  sleep_until_instant "$1"
  hc_health staging "$2" "$3" "$1"
  emit "${1:0:16}|0" "$(fmt_time "$1")" HostedCluster staging HEALTH "$4" >&3
}

# offer AT AVAILABLE CONDITIONAL TEXT: at simulated instant AT, staging's
# status.version lists the updates its update service offers
# (availableUpdates) and those it offers with risks (conditionalUpdates),
# as HyperShift copies them from the hosted cluster's ClusterVersion;
# printed as it happens.
offer() {
  sleep_until_instant "$1"
  hc_status staging '{version: {availableUpdates: $a, conditionalUpdates: $c}}' \
    --argjson a "$2" --argjson c "$3"
  emit "${1:0:16}|0" "$(fmt_time "$1")" HostedCluster staging UPDATES "$4" >&3
}

# pull and offer_again: 4.17.1 pulled from staging's update graph for a
# risk, then offered again.
pull() {
  offer "$PULL_AT" '[]' "$(jq -nc --arg i "$RELEASE_NEXT" --arg r "$RISK" --arg u "$RISK_URL" '[{
    release: {version: "4.17.1", image: $i},
    risks: [{name: $r, url: $u, message: "ovnkube-node restarts on upgrade",
             matchingRules: [{type: "Always"}]}],
    conditions: [{type: "Recommended", status: "False", reason: $r,
                  message: "ovnkube-node restarts on upgrade", lastTransitionTime: "2026-03-04T12:00:00Z"}]}]')" \
    "its update service pulls 4.17.1 for a risk ($RISK): conditionalUpdates, Recommended False"
}
offer_again() {
  offer "$OFFER_AT" "$(scenario_updates staging)" '[]' \
    "its update service offers 4.17.1 again (availableUpdates)"
}

# scenario_run: the week, day by day (the clock started at T_LAUNCH).
scenario_run() {
  local day
  for day in $(seq 1 "$DEMO_DAYS"); do
    sleep_until_day "$day"
    alive
    if [ "$day" -lt "$DEMO_DAYS" ]; then
      printf '%s|0\t   -- %s\n' "$(date -u -d "$SIM_START + $day days" +%Y-%m-%dT%H:%M)" \
        "$(date -u -d "$SIM_START + $day days" '+%A %Y-%m-%d')" >&3
    fi
    if [ "$day" = 1 ]; then
      requests
      # The health gate: a window opening while staging is Degraded is
      # skipped, its held release waits for the next one.
      health "$DEGRADED_AT" True UnavailableReplicas \
        "HyperShift reports it Degraded (UnavailableReplicas): a held change is not let through while it is"
    elif [ "$day" = 2 ] && [ "$DEMO_DAYS" -gt 2 ]; then
      health "$HEALTHY_AT" False AsExpected "HyperShift reports it healthy again (Degraded False)"
      revert
      pull
    elif [ "$day" = 3 ] && [ "$DEMO_DAYS" -gt 3 ]; then
      offer_again
      health "$AFTER_DEGRADED_AT" True UnavailableReplicas \
        "HyperShift reports it Degraded (UnavailableReplicas), after its update completed"
      health "$AFTER_HEALTHY_AT" False AsExpected "HyperShift reports it healthy again (Degraded False)"
    fi
  done
}
