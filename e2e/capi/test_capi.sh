#!/usr/bin/env bash
# End-to-end: the holds against REAL Cluster API. The "capi" instance runs
# Cluster API's own CRDs, webhooks and controllers (the core manager and the
# Docker provider's in-memory backend, e2e/capi/lib.sh); the behaviour model
# runs with --real-capi (model_start adds it on this instance), so only its
# HyperShift half acts: it writes the Cluster, the MachineDeployments
# (bootstrap.dataSecretName, a DevMachineTemplate), a MachineHealthCheck per
# pool, and plays the control plane. Cluster API creates the MachineSets and Machines, rolls, scales and
# remediates; the record comes from the real Machines. hcp-controller serves
# its admission holds beside them (the real API server calls them).
#
#   1. A NodePool version change requested outside the window is held at the
#      NodePool: HyperShift writes no new template, no replacement starts before the
#      window opens; the controller's writes while it is held are counted.
#   2. While held, a NodePool scale from 3 to 5 reaches Cluster API and it
#      scales; a machine marked for remediation is remediated by the
#      MachineHealthCheck and its MachineSet replaces it.
#   3. The window opens: the first replacement starts within TOL_ROLLOUT s.
#   4. The window closes during the rollout: the MachineDeployment is paused
#      and no replacement starts more than 1 s after the close. Then the
#      NodePool scales from 5 to 7 and a machine of the old MachineSet is
#      marked for remediation: which MachineSet each new machine comes
#      from, and how many never become nodes (their user data was retired
#      when the rollout started): none is made by an old MachineSet.
#   5. A 3-machine pool on a cluster without a policy rolls out, start to end.
#   6. Many boundaries: a daily window on a fast clock, a change held each
#      day and let through at the open; no replacement starts outside a
#      window, and each open's first replacement is timed.
# Figures: each of the above (window open -> first replacement step by step
# and p50/p99 over every boundary), and the managers' RSS and CPU.
#
# CAPI_E2E_SCENARIOS (default "capi_holds capi_boundaries") narrows the run.
# CAPI_E2E_NO_HOLD=1 runs the controller without its webhooks (the hold
# removed): the checks of 1-4 must then fail. Needs the "capi" instance
# (e2e/cluster.sh up capi), build/hcp-controller and the model.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CTL_E2E_INSTANCE=${CTL_E2E_INSTANCE:-capi}
# shellcheck source=e2e/controller/lib.sh
. "$here/../controller/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

# Window open to the first replacement: the controller writes the held
# NodePool request, HyperShift writes the new template, Cluster API's MachineDeployment
# controller makes a MachineSet and that one a Machine (3.6 s measured).
TOL_ROLLOUT=8
WH_NAME=hcp-e2e-capi-$$
SCALE=60                  # a real second is a simulated minute
SIM0=2026-03-06T22:30:00Z # Friday; the window opens Saturday 01:00 (150 s real)
OPEN=2026-03-07T01:00:00Z
CLOSE=2026-03-07T01:30:00Z # 30 s real: less than 5 machines take to replace
STARTUP=${CAPI_E2E_MACHINE_STARTUP:-4s}

CTL_SLOW_BASE=1 # the clocks above are chosen for Cluster API's own timing
model_suite_begin
[ "${E_CAPI:-}" = 1 ] || { not_ok "the instance runs Cluster API" "$CTL_E2E_INSTANCE has no managers"; summary; exit 1; }

# cpu_s PIDFILE: user+system CPU seconds of a manager so far; rss_mib PIDFILE.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$(cat "$1")/stat"; }
rss_mib() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$(cat "$1")/status"; }
cpu0_core=$(cpu_s "$E_CAPI_CORE_PID_FILE") cpu0_dev=$(cpu_s "$E_CAPI_DEV_PID_FILE")
t_suite=$(now_us)

MACHINES=/apis/cluster.x-k8s.io/v1beta2/namespaces
# capi_machines NS MD PHASE: names of the pool's Machines in that phase.
capi_machines() {
  api GET "$MACHINES/$1/machines" | jq -r --arg md "$2" --arg p "$3" '.items[]
    | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == $md and .status.phase == $p
             and .metadata.deletionTimestamp == null) | .metadata.name'
}
running() { [ "$(capi_machines "$1" "$2" Running | wc -l)" -ge "$3" ]; }
# mk_capi_pool NS NAME CLUSTER REPLICAS [KEY=VALUE...]: a Replace pool with
# autoRepair (HyperShift then writes its MachineHealthCheck).
mk_capi_pool() {
  local ns=$1 name=$2 cluster=$3 replicas=$4
  shift 4
  api POST "$HS/namespaces/$ns/nodepools" "$(jq -nc --arg n "$name" --arg c "$cluster" \
    --arg img "$REL0" --argjson r "$replicas" --argjson a "$(annotations_json "$@")" '{
    apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
    metadata: {name: $n, annotations: $a},
    spec: {clusterName: $c, replicas: $r, management: {upgradeType: "Replace", autoRepair: true},
           platform: {type: "None"}, release: {image: $img}}}')" application/json >/dev/null
}
# mk_hc_real NS NAME [KEY=VALUE...]: mk_hc of e2e/controller/lib.sh without
# the Cluster: Cluster API's webhook refuses a Cluster without
# infrastructureRef, controlPlaneRef or topology; HyperShift (the model)
# creates it with its infrastructure.
mk_hc_real() {
  local ns=$1 name=$2
  shift 2
  k create namespace "$ns-$name" >/dev/null 2>&1 && echo "$ns-$name" >>"$CTL_NSFILE"
  api POST "$HS/namespaces/$ns/hostedclusters" "$(jq -nc --arg n "$name" \
    --argjson a "$(annotations_json "$@")" '{apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster", metadata: {name: $n, annotations: $a},
      spec: {release: {image: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
             infraID: ($n + "-infra"), platform: {type: "None"}}}')" application/json >/dev/null
}
# unheld_np: changes the controller counted as having got past its holds.
unheld_np() { metric a 'change_management_unheld_changes_total\{kind="NodePool",system="worker-nodes"\}'; }
# at_rel1 NS NAME: the HostedCluster's control plane runs 4.17.1, completed
# (a NodePool may not move past its control plane's completed release).
at_rel1() {
  api PATCH "$(hc_path "$1" "$2")" "{\"spec\":{\"release\":{\"image\":\"$REL1\"}}}" >/dev/null &&
    api PATCH "$HS/namespaces/$1/hostedclusters/$2/status" "$(jq -nc --arg i "$REL1" '[
    {op: "add", path: "/status", value: {version: {desired: {image: $i, version: "4.17.1"},
      observedGeneration: 2, availableUpdates: null,
      history: [{state: "Completed", image: $i, version: "4.17.1", startedTime: "2026-01-01T00:00:00Z",
                 completionTime: "2026-01-01T01:00:00Z", verified: false}]}}}]')" application/json-patch+json
}

# tl_watch NAME PATH: records the watch events of a collection from now into
# $CTL_TMP/tl-NAME, each line "<real epoch seconds>\t<event JSON>" (the
# instant this shell read it), until tl_stop.
TL_PIDS=()
tl_watch() {
  local rv
  rv=$(get "$2" .metadata.resourceVersion)
  curl -s -N --max-time 900 --cacert "$E_CA" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "$E_SERVER$2?watch=1&resourceVersion=$rv" 2>/dev/null \
    > >(while IFS= read -r l; do printf '%s\t%s\n' "$EPOCHREALTIME" "$l"; done >"$CTL_TMP/tl-$1") &
  TL_PIDS+=($!)
}
tl_stop() {
  local p
  for p in "${TL_PIDS[@]}"; do
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  TL_PIDS=()
}
# tl_first NAME AFTER JQ [ARG]: the real instant of the first event of
# tl_watch NAME at or after AFTER (epoch seconds) that JQ selects (true; $v
# is ARG).
tl_first() {
  local t l
  while IFS=$'\t' read -r t l; do
    awk -v t="$t" -v a="$2" 'BEGIN { exit !(t >= a) }' || continue
    [ "$(jq -r --arg v "${4:-}" "$3" <<<"$l" 2>/dev/null)" = true ] && { echo "$t"; return; }
  done <"$CTL_TMP/tl-$1"
}
# tl_start NS CPNS NODEPOOL MD: watches the NodePools of NS and the
# MachineDeployments, MachineSets and Machines of the control-plane
# namespace CPNS; notes NODEPOOL's and MD's generations.
TL_GEN_NP=0 TL_GEN_MD=0
tl_start() {
  TL_GEN_NP=$(get "$HS/namespaces/$1/nodepools/$3" .metadata.generation)
  TL_GEN_MD=$(get "$MACHINES/$2/machinedeployments/$4" .metadata.generation)
  tl_watch np "$HS/namespaces/$1/nodepools"
  tl_watch md "$MACHINES/$2/machinedeployments"
  tl_watch ms "$MACHINES/$2/machinesets"
  tl_watch m "$MACHINES/$2/machines"
}
# tl_report OPEN NODEPOOL MD OBJECT RECORDED: after a window opened at OPEN
# (epoch seconds, real) for NODEPOOL and its MachineDeployment MD, where the
# first replacement of OBJECT was recorded at RECORDED (RFC 3339): stops the
# watches and prints, in ms after the open, each step on the way.
tl_report() {
  sleep 1
  tl_stop
  local t_np t_md t_ms t_m t_rec sel="(.object.metadata.labels[\"cluster.x-k8s.io/deployment-name\"] == \"$3\")"
  t_np=$(tl_first np "$1" ".object.metadata.name == \"$2\" and .object.metadata.generation > ${TL_GEN_NP:-0}")
  t_md=$(tl_first md "$1" ".object.metadata.name == \"$3\" and .object.metadata.generation > ${TL_GEN_MD:-0}")
  t_ms=$(tl_first ms "$1" ".type == \"ADDED\" and $sel")
  t_m=$(tl_first m "$1" ".type == \"ADDED\" and $sel")
  [ -n "$5" ] && t_rec=$(secs "$5")
  echo "# figure: real Cluster API, window open -> first replacement, ms after the open: the controller writes the NodePool $(ms_between "$1" "$t_np"), HyperShift (model) the MachineDeployment template $(ms_between "$1" "$t_md"), Cluster API creates the MachineSet $(ms_between "$1" "$t_ms") and the Machine $(ms_between "$1" "$t_m"), the model records it $(ms_between "$1" "${t_rec:-}") (load $(cut -d' ' -f1-3 /proc/loadavg))"
}
# pool_ms: "name revision spec.replicas machines" of each MachineSet of np1
# in $hcp (capi_holds).
pool_ms() {
  api GET "$MACHINES/$hcp/machinesets" | jq -r '.items[] | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == "np1"
    and .metadata.deletionTimestamp == null) | "\(.metadata.name) \(.metadata.annotations["machinedeployment.clusters.x-k8s.io/revision"] // "-") \(.spec.replicas) \(.status.replicas // 0)"'
}
# pool_machines: "name machineset" of each Machine of np1 not being deleted.
pool_machines() {
  api GET "$MACHINES/$hcp/machines" | jq -r '.items[] | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == "np1"
    and .metadata.deletionTimestamp == null) | "\(.metadata.name) \(.metadata.labels["cluster.x-k8s.io/set-name"])"'
}
# ms_between A B: milliseconds from A to B (epoch seconds; "-" when either
# is missing).
ms_between() {
  if [ -n "$1" ] && [ -n "$2" ]; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b - a) * 1000 }'; else echo -; fi
}

capi_holds() {
  local ns hcp md obj w0 w1 t0 victim
  ns=$(new_ns capi) || { not_ok "namespace"; return; }
  hcp=$ns-a
  must mk_policy "$ns" weekend "$(weekly_policy Saturday 01:00 30m)" || return
  # The policy comes once the pools run (see below).
  must mk_hc_real "$ns" a || return
  must mk_hc_real "$ns" b || return
  must at_rel1 "$ns" a || return
  must at_rel1 "$ns" b || return
  if [ "${CAPI_E2E_NO_HOLD:-0}" = 1 ]; then
    echo "# CAPI_E2E_NO_HOLD=1: the controller runs without its webhooks (the hold removed)"
    MODEL_WEBHOOKS=0 model_scenario "$ns" "$SIM0" "$SCALE" "a b" --machine-startup "$STARTUP" || return
  else
    model_scenario "$ns" "$SIM0" "$SCALE" "a b" --machine-startup "$STARTUP" || return
  fi
  must mk_capi_pool "$ns" np1 a 3 || return
  must mk_capi_pool "$ns" np2 b 3 || return
  md=$(md_path "$ns" a np1) obj=$hcp/np1
  t0=$(now_us)
  check "Cluster API brings up the 3 machines of each pool (Running)" wait_for 100 eval \
    "running $hcp np1 3 && running $ns-b np2 3"
  echo "# figure: real Cluster API: NodePools created to 2 x 3 machines Running (and the control-plane stand-in) in $((($(now_us) - t0) / 1000)) ms"
  check_eq "the model recorded the machines from the real ones" 3 "$(model_count machine-created "$obj")"
  check_eq "the MachineHealthCheck HyperShift writes for autoRepair exists" np1 \
    "$(get "$CAPI/namespaces/$hcp/machinehealthchecks/np1" .metadata.name)"
  # The pools exist before the policy does, as on a management cluster.
  must api PATCH "$(hc_path "$ns" a)" "{\"metadata\":{\"annotations\":$(annotations_json policy=weekend)}}" || return
  must api PATCH "$(np_path "$ns" np1)" "{\"metadata\":{\"annotations\":$(annotations_json policy=weekend)}}" || return
  pending_np() { [ "$(cond "$(np_path "$ns" np1)" ChangesPaused status)" = True ]; }
  check "the policy applies: the NodePool's changes are paused" wait_for 10 pending_np
  still_before a "$OPEN" "the pools came up" || return

  # ---- 1. the version change is held -------------------------------------------
  SCENARIO=held
  w0=$(metric a hcp_controller_writes_total)
  request_release "$(np_path "$ns" np1)" "$REL1" >/dev/null
  # DESIGN.md 3.6: held at the NodePool, so HyperShift never sees a new
  # target and writes no new template.
  now_is "the NodePool's release is held at the NodePool (4.17.0 stays)" "$REL0" \
    get "$(np_path "$ns" np1)" .spec.release.image
  check_contains "the request is recorded on the NodePool" "$REL1" \
    "$(get "$(np_path "$ns" np1)" ".metadata.annotations[\"$CM/requested-nodepool-spec\"]")"
  sleep 1
  now_is "HyperShift writes no new template (4.17.0 stays)" 4.17.0 md_version "$md"
  now_is "no rollout (real Machines)" 0 model_count replacement-start "$obj"
  now_is "no new MachineSet" 1 eval "api GET $MACHINES/$hcp/machinesets | jq '[.items[] | select(.metadata.labels[\"cluster.x-k8s.io/deployment-name\"] == \"np1\")] | length'"
  now_is "merely waiting, the MachineDeployment is not paused" unpaused pause_state "$md"

  # ---- 2. scaling and remediation go on while held ----------------------------
  SCENARIO=held-scale
  api PATCH "$(np_path "$ns" np1)" '{"spec": {"replicas": 5}}' >/dev/null
  t0=$(now_us)
  capi_scaled() { [ "$(model_count scale "$obj")" -ge 1 ] && running "$hcp" np1 5; }
  check "the scale from 3 to 5 reaches Cluster API: 5 machines Running" wait_for 60 capi_scaled
  echo "# figure: real Cluster API, change held: NodePool scale 3 -> 5 to 5 machines Running in $((($(now_us) - t0) / 1000)) ms (scale recorded after $(awk -v a="$(secs "$(first_real scale "$obj")")" -v b="$t0" 'BEGIN { printf "%d", (a - b / 1e6) * 1000 }') ms)"
  SCENARIO=held-remediation
  victim=$(capi_machines "$hcp" np1 Running | head -1)
  api PATCH "$MACHINES/$hcp/machines/$victim" \
    '{"metadata": {"annotations": {"cluster.x-k8s.io/remediate-machine": ""}}}' >/dev/null ||
    not_ok "machine $victim marked for remediation"
  t0=$(now_us)
  capi_remediated() { [ "$(model_count remediation-replacement "$obj")" -ge 1 ] && running "$hcp" np1 5; }
  check "the MachineHealthCheck remediates a machine and its MachineSet replaces it" wait_for 60 capi_remediated
  echo "# figure: real Cluster API, change held: machine marked -> replacement created in $(awk -v a="$(secs "$(first_real remediation-replacement "$obj")")" -v b="$t0" 'BEGIN { printf "%d", (a - b / 1e6) * 1000 }') ms, Running 5 again in $((($(now_us) - t0) / 1000)) ms"
  check_eq "the remediated machine is gone" "" "$(get "$MACHINES/$hcp/machines/$victim" '.metadata.name // ""')"
  now_is "the template is still the running one (4.17.0)" 4.17.0 md_version "$md"
  still_before a "$OPEN" "scaling and remediation while held" || return
  w1=$(metric a hcp_controller_writes_total)
  echo "# figure: real Cluster API: the controller's writes while the change was held (request, scale, remediation): $((${w1%.*} - ${w0%.*}))"
  in_range "no write loop while held (the controller's writes bounded)" "$((${w1%.*} - ${w0%.*}))" 0 6
  # Cluster API v1beta2 counts a machine in upToDateReplicas only once its
  # UpToDate condition is set, after it exists; the controller counts a
  # rollout from the newest MachineSet's machines (status.deprecated.v1beta1
  # .updatedReplicas), so a scale-up or a remediation replacement is not one.
  now_is "no backstop pause during the scale-up or the remediation (no ChangeNotHeld)" 0 unheld_np
  # What the controller read, when it saw a rollout there: the counters it
  # compares (status.replicas against the newest MachineSet's machines) and
  # every MachineSet of the pool.
  [ "$(unheld_np)" = 0 ] || {
    api GET "$md" | jq -c '{generation: .metadata.generation, replicas: .spec.replicas,
      status: (.status | {replicas, upToDateReplicas, updated: .deprecated.v1beta1.updatedReplicas,
      observedGeneration})}' | sed 's/^/#   MachineDeployment: /'
    api GET "$MACHINES/$hcp/machinesets" | jq -c '.items[] |
      select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == "np1") |
      {name: .metadata.name, replicas: .spec.replicas, status: .status.replicas}' | sed 's/^/#   MachineSet: /'
  }
  now_is "merely waiting after the scale and the remediation, the MachineDeployment is not paused" unpaused pause_state "$md"

  # ---- 3. the window opens ----------------------------------------------------------
  SCENARIO=window-open
  tl_start "$ns" "$hcp" np1 np1
  starts_at a "the first machine replacement (real Cluster API)" "$OPEN" "$TOL_ROLLOUT" replacement-start "$obj"
  tl_report "$(ctl_real_at a "$OPEN")" np1 np1 "$obj" "$(first_real replacement-start "$obj")"
  echo "# figure: real Cluster API: window open -> first replacement started (Machine created) in $(awk -v a="$(secs "$(first_real replacement-start "$obj")")" -v b="$(ctl_real_at a "$OPEN")" 'BEGIN { printf "%d\n", (a - b) * 1000 }' | tee -a "$LAT_FILE") ms"
  now_is "the held request goes through: HyperShift writes the new template" 4.17.1 md_version "$md"

  # ---- 4. the window closes during the rollout --------------------------------
  SCENARIO=window-close
  expect_at a "the rollout under way is paused when the window closes" "$CLOSE" 2.5 is_state "$md" paused+marker
  sleep_until_sim a "$CLOSE" 5
  none_after a "no replacement starts more than 1 s after the close (real Machines)" "$CLOSE" replacement-start "$obj"
  # That check reads Cluster API's decisions (none_after): the record has
  # them, one a machine added (the new MachineSet's first and every later
  # step before the close).
  check "Cluster API's decisions are in the record: a machine added for every replacement started" \
    test "$(model_decided "$obj")" -ge "$(model_count replacement-start "$obj")" -a "$(model_count replacement-start "$obj")" -ge 1
  in_range "the rollout was cut: replacements done of 5" "$(model_count replacement-done "$obj")" 0 4
  echo "# figure: real Cluster API: replacements started before the close $(model_count replacement-start "$obj"), done $(model_count replacement-done "$obj"); last start at $(model_times replacement-start "$obj" | sort | tail -1) (close $CLOSE)"

  # ---- 4b. a scale-up and a remediation while the rollout is paused -------------
  # The rollout's start retired the old target's user data and token
  # (HyperShift token.go cleanupOutdated), so a machine an old MachineSet
  # made now would never become a node (the model records bootstrap-failed
  # for it). Recorded: where the machines of a scale-up and of a
  # remediation go while the rollout is held paused.
  SCENARIO=paused-scale
  local rev oldms before nf0 added in_old t1
  rev=$(get "$md" '.metadata.annotations["machinedeployment.clusters.x-k8s.io/revision"] // ""')
  pool_ms | sed 's/^/#   MachineSet at the pause (name revision spec.replicas machines): /'
  oldms=$(pool_ms | awk -v r="$rev" '$2 != r { printf "%s ", $1 }')
  before=$(pool_machines | cut -d' ' -f1)
  nf0=$(model_count bootstrap-failed "$obj") w0=$(metric a hcp_controller_writes_total)
  echo "# figure: real Cluster API, HyperShift (model) at the rollout's start: $(model_records | jq -rs --arg p "$hcp/" '[.[] | select((.event == "user-data-deleted" or .event == "token-expiry-set") and (.object | startswith($p)))
    | "\(.event) \(.object | sub(".*/"; "")) at \(.at)"] | join("; ")') (open $OPEN)"
  check_eq "the NodePool scales from 5 to 7 during the paused rollout" 7 \
    "$(api PATCH "$(np_path "$ns" np1)" '{"spec": {"replicas": 7}}' | jq -r '.spec.replicas // .message')"
  victim=$(pool_machines | awk -v o=" $oldms" 'index(o, " " $2 " ") { print $1; exit }')
  if [ -n "$victim" ]; then
    api PATCH "$MACHINES/$hcp/machines/$victim" \
      '{"metadata": {"annotations": {"cluster.x-k8s.io/remediate-machine": ""}}}' >/dev/null ||
      not_ok "machine $victim of an old MachineSet marked for remediation"
  fi
  t0=$(now_us)
  check "HyperShift (model) writes the scale to the paused MachineDeployment" wait_for 10 \
    eval "[ \"\$(get $md .spec.replicas)\" = 7 ]"
  t1=$(now_us)
  # The old MachineSet's machines would fail at once; a remediation takes
  # about 11 s on this instance (held-remediation above).
  sleep 20
  added=$(pool_machines | grep -vwF -f <(printf '%s\n' $before) || true)
  pool_ms | sed 's/^/#   MachineSet after (name revision spec.replicas machines): /'
  echo "$added" | awk -v o=" $oldms" 'NF { print "#   new machine " $1 " of " $2 (index(o, " " $2 " ") ? " (old MachineSet)" : " (newest MachineSet)") }'
  in_old=$(echo "$added" | awk -v o=" $oldms" 'NF && index(o, " " $2 " ")' | wc -l)
  echo "# figure: real Cluster API, rollout paused at the close, NodePool scaled 5 -> 7 and old-MachineSet machine ${victim:-none} marked for remediation, $((($(now_us) - t1) / 1000)) ms after the MachineDeployment took 7: MachineSets' spec.replicas $(pool_ms | awk '{ s += $3 } END { print s + 0 }'), machines $(pool_machines | wc -l); new machines $(echo "$added" | awk 'NF' | wc -l), of them in an old MachineSet $in_old; never became nodes (bootstrap-failed) $(($(model_count bootstrap-failed "$obj") - nf0))$(model_records | jq -rs --arg o "$obj" '[.[] | select(.event == "bootstrap-failed" and .object == $o) | .detail] | group_by(.) | map(" \(length) x \(.[0])") | join(";") | if . == "" then "" else ":" + . end')"
  echo "# figure: real Cluster API, the paused MachineDeployment: $(api GET "$md" | jq -r '"spec.replicas \(.spec.replicas), spec.paused \(.spec.paused), annotation cluster.x-k8s.io/paused \(.metadata.annotations["cluster.x-k8s.io/paused"] // "absent"), generation \(.metadata.generation) observed \(.status.observedGeneration), status.replicas \(.status.replicas)"')"
  echo "# figure: real Cluster API, the marked machine ${victim:-none} $([ -z "$victim" ] || api GET "$MACHINES/$hcp/machines/$victim" | jq -r 'if .metadata.deletionTimestamp then "is being deleted" else "stays" end + "; OwnerRemediated: " + ([.status.conditions[]? | select(.type == "OwnerRemediated") | "\(.status) \(.reason) \(.message)"] | .[0] // "none")' 2>/dev/null || echo "is gone") ($((($(now_us) - t0) / 1000)) ms after the mark)"
  w1=$(metric a hcp_controller_writes_total)
  echo "# figure: real Cluster API: the controller's writes from the scale-up during the paused rollout to $((($(now_us) - t0) / 1000)) ms after: $((${w1%.*} - ${w0%.*}))"
  in_range "no write loop after the scale-up during the paused rollout (the controller's writes bounded)" "$((${w1%.*} - ${w0%.*}))" 0 12
  check_eq "no machine of an old MachineSet is made during the paused rollout" 0 "$in_old"
  check_eq "no machine made during the paused rollout fails to bootstrap (never a node)" 0 \
    "$(($(model_count bootstrap-failed "$obj") - nf0))"

  # ---- 5. a 3-machine rollout, start to end -----------------------------------------
  SCENARIO=rollout
  local o2=$ns-b/np2 start end
  request_release "$(np_path "$ns" np2)" "$REL1" >/dev/null
  t0=$(now_us)
  done3() { [ "$(model_count replacement-done "$o2")" -ge 3 ]; }
  check "a 3-machine pool without a policy rolls out completely" wait_for 180 done3
  start=$(first_real replacement-start "$o2") end=$(last_real replacement-done "$o2")
  echo "# figure: real Cluster API: rollout of 3 machines (maxSurge 1, maxUnavailable 0, in-memory machines starting in 2 x $STARTUP), first replacement to last old machine gone: $(awk -v a="$(secs "$start")" -v b="$(secs "$end")" 'BEGIN { printf "%.1f", b - a }') s; request to first replacement $(awk -v a="$(secs "$start")" -v b="$t0" 'BEGIN { printf "%d", (a - b / 1e6) * 1000 }') ms"
  check_eq "every new machine runs 4.17.1" "v4.17.1 v4.17.1 v4.17.1" "$(api GET "$MACHINES/$ns-b/machines" |
    jq -r '[.items[] | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == "np2"
      and .metadata.deletionTimestamp == null) | .spec.version] | sort | join(" ")')"
}

# ---- 6. many boundaries ---------------------------------------------------------
# A daily window 04:00-22:00 on a clock 2880 times real time (a day in 30 s,
# the window 22.5 s of it); B_DAYS times a configuration change requested
# while closed is held, goes through at the next open, and the 1-machine
# pool rolls within the window. Over every boundary: no replacement starts
# outside a window (1 s real of slack after a close), and each window's
# first replacement is timed from the open.
B_SCALE=2880
B_SIM0=2026-03-09T00:00:00Z
B_START=04:00
B_DUR=18h
B_END=22:00
B_DUR_S=64800
B_DAYS=${CAPI_E2E_DAYS:-4}
B_STARTUP=1s
LAT_FILE=$CTL_TMP/open-latency-ms

# ctl_sim_now: the controller's simulated clock now (epoch seconds, lower bound).
ctl_sim_now() { sim_lo a | cut -d. -f1; }
# day_at EPOCH HH:MM: that time of EPOCH's day (epoch seconds).
day_at() { date -u -d "$(date -u -d "@$1" +%F)T$2:00Z" +%s; }

# writes_by_what FROM TO: the controller's writes it logged (-v 2) between
# lines FROM and TO of its log, counted by what and resource
# ("4 status (nodepools), 2 event (events)").
writes_by_what() {
  sed -n "$(($1 + 1)),$2p" "${CTL_LOG[a]}" | grep ' write sent ' |
    sed -E 's/.* what=("[^"]*"|[^ ]*).* path=([^ ]*).*/\1 \2/; s/"//g' |
    awk '{ p = $NF; $NF = ""; n = split(p, s, "/"); r = s[n]
           for (i = 1; i < n; i++) if (s[i] == "namespaces") { r = s[i + 2]; break }
           sub(/ $/, ""); print $0 " (" r ")" }' |
    sort | uniq -c | sort -rn | awk '{ c = $1; $1 = ""; printf "%s%d%s", (NR > 1 ? ", " : ""), c, $0 }'
}

capi_boundaries() {
  local ns hcp np obj i open close n0 w0 w1 l0 l1 first lat want
  # Every write logged, to say what the writes of each day were.
  local -a MODEL_CTL_ARGS=(-v 2)
  ns=$(new_ns capib) || { not_ok "namespace"; return; }
  hcp=$ns-c np=$(np_path "$ns" np3) obj=$ns-c/np3
  must mk_policy "$ns" daily "$(daily_policy "$B_START" "$B_DUR")" || return
  must mk_hc_real "$ns" c || return
  must at_rel1 "$ns" c || return
  model_scenario "$ns" "$B_SIM0" "$B_SCALE" c --machine-startup "$B_STARTUP" || return
  must mk_capi_pool "$ns" np3 c 1 || return
  check "Cluster API brings up the pool's machine (Running)" wait_for 100 eval "running $hcp np3 1"
  must api PATCH "$(hc_path "$ns" c)" "{\"metadata\":{\"annotations\":$(annotations_json policy=daily)}}" || return
  must api PATCH "$np" "{\"metadata\":{\"annotations\":$(annotations_json policy=daily)}}" || return
  # The ConfigMaps the days' requests name in spec.config, created first as
  # a user would (a name with no ConfigMap is looked for again and again,
  # which would count among the writes below).
  for i in $(seq 1 "$B_DAYS"); do
    api POST "/api/v1/namespaces/$ns/configmaps" "$(jq -nc --arg n "cfg-$i" \
      '{apiVersion: "v1", kind: "ConfigMap", metadata: {name: $n}, data: {config: ""}}')" \
      application/json >/dev/null || { not_ok "ConfigMap cfg-$i"; return; }
  done
  want=""
  for i in $(seq 1 "$B_DAYS"); do
    SCENARIO=day-$i
    # The next open at least 2 s (real) away, so the request lands while closed.
    open=$(day_at "$(ctl_sim_now)" "$B_START")
    while [ "$open" -lt $(($(ctl_sim_now) + 2 * B_SCALE)) ]; do open=$((open + 86400)); done
    close=$(day_at "$open" "$B_END")
    # Closed until the open: wait out the rest of the last window.
    sleep_until_sim a "$(rfc3339 $((open - 86400 + B_DUR_S)))" 0.2
    n0=$(model_count replacement-start "$obj")
    w0=$(metric a hcp_controller_writes_total)
    l0=$(wc -l <"${CTL_LOG[a]}")
    api PATCH "$np" "{\"spec\":{\"config\":[{\"name\":\"cfg-$i\"}]}}" >/dev/null
    now_is "the configuration change is held at the NodePool" "$want" get "$np" '[.spec.config // [] | .[].name] | join(",")'
    tl_start "$ns" "$hcp" np3 np3
    sleep_until_sim a "$(rfc3339 $((open - B_SCALE / 4)))"
    w1=$(metric a hcp_controller_writes_total)
    l1=$(wc -l <"${CTL_LOG[a]}")
    # Not bounded here: on this clock the hours the status reports pass
    # 2880 times faster (capi_holds bounds the writes of a held change).
    echo "# figure: real Cluster API, day $i: the controller's writes from the request to the open ($(((open - B_DUR_S - (open - 86400)) / 3600)) h simulated): $((${w1%.*} - ${w0%.*})): $(writes_by_what "$l0" "$l1")"
    starts_at a "the first replacement after the open" "$(rfc3339 "$open")" "$TOL_ROLLOUT" replacement-start "$obj" "$n0"
    first=$(model_nth replacement-start "$obj" $((n0 + 1)))
    tl_report "$(ctl_real_at a "$(rfc3339 "$open")")" np3 np3 "$obj" "$(model_records | jq -rs --arg o "$obj" --arg at "$first" \
      '[.[] | select(.event == "replacement-start" and .object == $o and .at == $at) | .real] | .[0] // ""')"
    [ -n "$first" ] && lat=$(awk -v a="$(secs "$first")" -v b="$open" -v k="$B_SCALE" 'BEGIN { printf "%d", (a - b) / k * 1000 }') &&
      echo "$lat" >>"$LAT_FILE" && echo "# figure: real Cluster API, day $i: window open -> first replacement (Machine created) $lat ms"
    want=cfg-$i
    now_is "the change went through at the open" "$want" get "$np" '[.spec.config // [] | .[].name] | join(",")'
    check "the 1-machine rollout completes within the window" wait_for \
      "$(awk -v c="$close" -v n="$(sim_hi a)" -v k="$B_SCALE" 'BEGIN { d = (c - n) / k; printf "%.1f", (d > 0 ? d : 0) }')" \
      eval "[ \"\$(model_count replacement-done $obj)\" -ge $i ] && running $hcp np3 1"
  done
  sleep_until_sim a "$(rfc3339 "$close")" 1.5
  # No replacement outside a window: each start's time of day is in
  # [04:00, 22:00 + 1 s real).
  local outside
  outside=$(model_times replacement-start "$obj" | while read -r t; do
    awk -v t="$(secs "$t")" -v lo="$(day_at "$(secs "$t" | cut -d. -f1)" "$B_START")" \
      -v hi="$(day_at "$(secs "$t" | cut -d. -f1)" "$B_END")" -v k="$B_SCALE" \
      'BEGIN { exit !(t < lo || t >= hi + k) }' && echo "$t"
  done)
  check_eq "no replacement started outside a window over $B_DAYS boundaries (real Machines)" "" "$outside"
  check_eq "every day's change rolled the pool once" "$B_DAYS" "$(model_count replacement-start "$obj")"
}

for s in ${CAPI_E2E_SCENARIOS:-capi_holds capi_boundaries}; do run_scenario "$s"; done
if [ -s "$LAT_FILE" ]; then
  echo "# figure: real Cluster API: window open -> first replacement over $(wc -l <"$LAT_FILE") boundaries: $(sort -n "$LAT_FILE" | awk '{ v[NR] = $1 } END { p50 = v[int((NR + 1) / 2)]; i99 = int(NR * 0.99 + 0.999); if (i99 < 1) i99 = 1; printf "p50 %d ms, p99 %d ms, max %d ms", p50, v[i99], v[NR] }') (load $(cut -d' ' -f1-3 /proc/loadavg))"
fi

echo "# figure: Cluster API managers after the suite ($((($(now_us) - t_suite) / 1000000)) s): core RSS $(rss_mib "$E_CAPI_CORE_PID_FILE") MiB, CPU $(awk -v a="$(cpu_s "$E_CAPI_CORE_PID_FILE")" -v b="$cpu0_core" 'BEGIN { printf "%.1f", a - b }') s; in-memory provider RSS $(rss_mib "$E_CAPI_DEV_PID_FILE") MiB, CPU $(awk -v a="$(cpu_s "$E_CAPI_DEV_PID_FILE")" -v b="$cpu0_dev" 'BEGIN { printf "%.1f", a - b }') s (load $(cut -d' ' -f1-3 /proc/loadavg))"
summary
