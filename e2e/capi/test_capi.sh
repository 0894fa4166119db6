#!/usr/bin/env bash
# End-to-end: the holds against REAL Cluster API. The "capi" instance runs
# Cluster API's own CRDs, webhooks and controllers (the core manager and the
# Docker provider's in-memory backend, e2e/capi/lib.sh); the behaviour model
# runs with --real-capi, so only its HyperShift half acts: it writes the
# Cluster, the MachineDeployments (bootstrap.dataSecretName, a
# DevMachineTemplate), a MachineHealthCheck per pool, and plays the control
# plane. Cluster API creates the MachineSets and Machines, rolls, scales and
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
#      and no replacement starts more than 1 s after the close.
#   5. A 3-machine pool on a cluster without a policy rolls out, start to end.
# Figures: each of the above, and the managers' RSS and CPU.
#
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

model_suite_begin
[ "${E_CAPI:-}" = 1 ] || { not_ok "the instance runs Cluster API" "$CTL_E2E_INSTANCE has no managers"; summary; exit 1; }

# cpu_s PIDFILE: user+system CPU seconds of a manager so far; rss_mib PIDFILE.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$(cat "$1")/stat"; }
rss_mib() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$(cat "$1")/status"; }
cpu0_core=$(cpu_s "$E_CAPI_CORE_PID_FILE") cpu0_dev=$(cpu_s "$E_CAPI_DEV_PID_FILE")
t_suite=$(now_us)

MACHINES=/apis/cluster.x-k8s.io/v1beta2/namespaces
# machines NS MD PHASE: names of the pool's Machines in that phase.
machines() {
  api GET "$MACHINES/$1/machines" | jq -r --arg md "$2" --arg p "$3" '.items[]
    | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == $md and .status.phase == $p
             and .metadata.deletionTimestamp == null) | .metadata.name'
}
running() { [ "$(machines "$1" "$2" Running | wc -l)" -ge "$3" ]; }
# mk_pool NS NAME CLUSTER REPLICAS [KEY=VALUE...]: a Replace pool with
# autoRepair (HyperShift then writes its MachineHealthCheck).
mk_pool() {
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
# real_s RFC3339: the real instant (epoch seconds) controller a's clock reads it.
real_s() {
  awk -v b="$(epoch "$1")" -v s="${CTL_SIM0[a]}" -v t0="${CTL_T0[a]}" -v k="${CTL_SCALE[a]}" \
    'BEGIN { printf "%.3f", t0 / 1e6 + (b - s) / k }'
}
# first_real EVENT OBJECT / last_real: the real time of the first/last record.
first_real() { model_records | jq -rs --arg e "$1" --arg o "$2" '[.[] | select(.event == $e and .object == $o) | .real] | sort | .[0] // ""'; }
last_real() { model_records | jq -rs --arg e "$1" --arg o "$2" '[.[] | select(.event == $e and .object == $o) | .real] | sort | .[-1] // ""'; }
secs() { date -u -d "$1" +%s.%N; }
# unheld_np: changes the controller counted as having got past its holds.
unheld_np() { metric a 'change_management_unheld_changes_total\{kind="NodePool",system="worker-nodes"\}'; }
# md_ver PATH: the MachineDeployment template's version without the "v"
# Cluster API's defaulting webhook puts in front (HyperShift writes 4.17.0).
md_ver() { md_version "$1" | sed 's/^v//'; }
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
    MODEL_WEBHOOKS=0 model_scenario "$ns" "$SIM0" "$SCALE" "a b" --real-capi --machine-startup "$STARTUP" || return
  else
    model_scenario "$ns" "$SIM0" "$SCALE" "a b" --real-capi --machine-startup "$STARTUP" || return
  fi
  must mk_pool "$ns" np1 a 3 || return
  must mk_pool "$ns" np2 b 3 || return
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
  now_is "HyperShift writes no new template (4.17.0 stays)" 4.17.0 md_ver "$md"
  now_is "no rollout (real Machines)" 0 model_count replacement-start "$obj"
  now_is "no new MachineSet" 1 eval "api GET $MACHINES/$hcp/machinesets | jq '[.items[] | select(.metadata.labels[\"cluster.x-k8s.io/deployment-name\"] == \"np1\")] | length'"
  now_is "merely waiting, the MachineDeployment is not paused" unpaused pause_state "$md"

  # ---- 2. scaling and remediation go on while held ----------------------------
  SCENARIO=held-scale
  api PATCH "$(np_path "$ns" np1)" '{"spec": {"replicas": 5}}' >/dev/null
  t0=$(now_us)
  scaled() { [ "$(model_count scale "$obj")" -ge 1 ] && running "$hcp" np1 5; }
  check "the scale from 3 to 5 reaches Cluster API: 5 machines Running" wait_for 60 scaled
  echo "# figure: real Cluster API, change held: NodePool scale 3 -> 5 to 5 machines Running in $((($(now_us) - t0) / 1000)) ms (scale recorded after $(awk -v a="$(secs "$(first_real scale "$obj")")" -v b="$t0" 'BEGIN { printf "%d", (a - b / 1e6) * 1000 }') ms)"
  SCENARIO=held-remediation
  victim=$(machines "$hcp" np1 Running | head -1)
  api PATCH "$MACHINES/$hcp/machines/$victim" \
    '{"metadata": {"annotations": {"cluster.x-k8s.io/remediate-machine": ""}}}' >/dev/null ||
    not_ok "machine $victim marked for remediation"
  t0=$(now_us)
  remediated() { [ "$(model_count remediation-replacement "$obj")" -ge 1 ] && running "$hcp" np1 5; }
  check "the MachineHealthCheck remediates a machine and its MachineSet replaces it" wait_for 60 remediated
  echo "# figure: real Cluster API, change held: machine marked -> replacement created in $(awk -v a="$(secs "$(first_real remediation-replacement "$obj")")" -v b="$t0" 'BEGIN { printf "%d", (a - b / 1e6) * 1000 }') ms, Running 5 again in $((($(now_us) - t0) / 1000)) ms"
  check_eq "the remediated machine is gone" "" "$(get "$MACHINES/$hcp/machines/$victim" '.metadata.name // ""')"
  now_is "the template is still the running one (4.17.0)" 4.17.0 md_ver "$md"
  still_before a "$OPEN" "scaling and remediation while held" || return
  w1=$(metric a hcp_controller_writes_total)
  echo "# figure: real Cluster API: the controller's writes while the change was held (request, scale, remediation): $((${w1%.*} - ${w0%.*}))"
  in_range "no write loop while held (the controller's writes bounded)" "$((${w1%.*} - ${w0%.*}))" 0 6
  # Cluster API v1beta2 counts a machine in upToDateReplicas only once its
  # UpToDate condition is set, after it exists; the controller counts a
  # rollout from the newest MachineSet's machines (status.deprecated.v1beta1
  # .updatedReplicas), so a scale-up or a remediation replacement is not one.
  now_is "no backstop pause during the scale-up or the remediation (no ChangeNotHeld)" 0 unheld_np
  now_is "merely waiting after the scale and the remediation, the MachineDeployment is not paused" unpaused pause_state "$md"

  # ---- 3. the window opens ----------------------------------------------------------
  SCENARIO=window-open
  starts_at a "the first machine replacement (real Cluster API)" "$OPEN" "$TOL_ROLLOUT" replacement-start "$obj"
  echo "# figure: real Cluster API: window open -> first replacement started (Machine created) in $(awk -v a="$(secs "$(first_real replacement-start "$obj")")" -v b="$(real_s "$OPEN")" 'BEGIN { printf "%d", (a - b) * 1000 }') ms"
  now_is "the held request goes through: HyperShift writes the new template" 4.17.1 md_ver "$md"

  # ---- 4. the window closes during the rollout --------------------------------
  SCENARIO=window-close
  expect_at a "the rollout under way is paused when the window closes" "$CLOSE" 2.5 is_state "$md" paused+marker
  sleep_until_sim a "$CLOSE" 5
  none_after a "no replacement starts more than 1 s after the close (real Machines)" "$CLOSE" replacement-start "$obj"
  in_range "the rollout was cut: replacements done of 5" "$(model_count replacement-done "$obj")" 0 4
  echo "# figure: real Cluster API: replacements started before the close $(model_count replacement-start "$obj"), done $(model_count replacement-done "$obj"); last start at $(model_times replacement-start "$obj" | sort | tail -1) (close $CLOSE)"

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

run_scenario capi_holds

echo "# figure: Cluster API managers after the suite ($((($(now_us) - t_suite) / 1000000)) s): core RSS $(rss_mib "$E_CAPI_CORE_PID_FILE") MiB, CPU $(awk -v a="$(cpu_s "$E_CAPI_CORE_PID_FILE")" -v b="$cpu0_core" 'BEGIN { printf "%.1f", a - b }') s; in-memory provider RSS $(rss_mib "$E_CAPI_DEV_PID_FILE") MiB, CPU $(awk -v a="$(cpu_s "$E_CAPI_DEV_PID_FILE")" -v b="$cpu0_dev" 'BEGIN { printf "%.1f", a - b }') s (load $(cut -d' ' -f1-3 /proc/loadavg))"
summary
