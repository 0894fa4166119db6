#!/usr/bin/env bash
# End-to-end: an InPlace NodePool held while restricted, with the HyperShift
# behaviour model (e2e/model) beside the controller, Cluster API's own
# controllers (instance "capi", e2e/capi/capi.mk; the model plays the
# in-place upgrader over their Machines), and the chart's webhook selection
# (objectSelector on the opted-in label, which the controller puts on the
# pool's MachineSet; failurePolicy Fail).
#
# Cluster API gives a stand-alone MachineSet's machines no UpToDate
# condition, so its status.upToDateReplicas stays 0 while machines run: the
# pool merely waits, its MachineSet unpaused, however that count reads.
#
# HyperShift starts an in-place update by writing the MachineSet annotation
# hypershift.openshift.io/nodePoolTargetConfigVersion, in the same write as
# the template's new user data; the in-place upgrader reads no pause. On a
# Friday evening the NodePool gets a new release: it is held at the NodePool
# (spec.release stays, the request is recorded), so HyperShift writes no
# new target or user data; the MachineSet stays unpaused and scales, and no
# in-place update starts until Saturday's window opens; then the controller
# applies the request, HyperShift writes the target, the upgrader starts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-06T15:00:00Z # Friday 15:00
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=600                 # a real second is ten simulated minutes: 60 s to the window
WH_NAME=hcp-e2e-inplace-$$
TARGET=hypershift.openshift.io/nodePoolTargetConfigVersion

webhook_scenario_begin

NS=$(new_ns inplace)
HCP_NS=$NS-a
WPORT=$(free_port)
chart_webhook_config "$WPORT" "$NS" "$HCP_NS" | k apply -f - >/dev/null ||
  not_ok "the chart's webhook configuration"

mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
# The pools' requests here are about windows: the control plane has
# completed the releases they ask for (hc_completed).
hc_completed "$NS" a "$REL1" || not_ok "HostedCluster history"
model_scenario_start c --replacement-duration 30m
api POST "$HS/namespaces/$NS/nodepools" "$(jq -nc --arg img "$REL0" '{
  apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
  metadata: {name: "ip", annotations: {"changemanagement.hypershift.openshift.io/policy": "weekend"}},
  spec: {clusterName: "a", replicas: 3, management: {upgradeType: "InPlace"},
         release: {image: $img}}}')" application/json >/dev/null || not_ok "NodePool ip"
MS=$CAPI/namespaces/$HCP_NS/machinesets/ip
check "the model created the MachineSet and its machines" wait_for 20 model_machines "$HCP_NS/ip" 3
check "the controller puts the opted-in label on the MachineSet" wait_for 10 labelled "$MS"
check "and on the NodePool (the NodePool hold's objectSelector)" wait_for 10 np_labelled ip
check_eq "restricted, merely waiting: the MachineSet is not paused" unpaused "$(pause_state "$MS")"

# ---- restricted: the target is held -------------------------------------------------

SCENARIO=held
target0=$(get "$MS" ".metadata.annotations[\"$TARGET\"]")
ud0=$(get "$MS" .spec.template.spec.bootstrap.dataSecretName)
out=$(api PATCH "$(np_path "$NS" ip)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}")
check_eq "the release is held at the NodePool" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
check_eq "the request is recorded" "$REL1" \
  "$(jq -r '.metadata.annotations["changemanagement.hypershift.openshift.io/requested-nodepool-spec"] // "{}" | fromjson | .release.image // ""' <<<"$out")"
sleep 2 # 20 simulated minutes of HyperShift reconciling
check_eq "HyperShift writes no new target" "$target0" "$(get "$MS" ".metadata.annotations[\"$TARGET\"]")"
check_eq "nor new user data" "$ud0" "$(get "$MS" .spec.template.spec.bootstrap.dataSecretName)"
check_eq "no in-place update started" 0 "$(model_count inplace-update-start "$HCP_NS/ip")"
api PATCH "$(np_path "$NS" ip)" '{"spec": {"replicas": 4}}' >/dev/null
t0=$(now_us)
# (HyperShift's MachineSet write, then Cluster API's MachineSet controller,
# on a machine the other lanes load: seconds.)
check "while held, a scale from 3 to 4 reaches Cluster API" wait_for 15 model_machines "$HCP_NS/ip" 4
echo "# figure: InPlace pool held: NodePool scale 3 -> 4 to the machine created in $((($(now_us) - t0) / 1000)) ms"
check_eq "still unpaused" unpaused "$(pause_state "$MS")"
s0=$(model_summary)
c0=$(metric c hcp_controller_writes_total)
sleep 10 # 100 simulated minutes restricted with the change held
s1=$(model_summary)
c1=$(metric c hcp_controller_writes_total)
# A write loop is HyperShift and the controller writing in turn. Beside
# Cluster API's own controllers the MachineSet also changes with their
# status writes as the new machine comes up, which are no loop.
hs=$(model_writes "$s0" "$s1" "MachineSet $HCP_NS/ip")
cw=$((${c1%.*} - ${c0%.*}))
echo "# figure: InPlace pool held for 100 simulated minutes: the MachineSet changed $(model_writes "$s0" "$s1" "MachineSet $HCP_NS/ip" observed) times, $hs of them by the model, the controller wrote $cw objects"
in_range "no write loop on the MachineSet while held (the model's and the controller's writes)" "$((hs + cw))" 0 3
check_eq "no in-place update started outside the window" 0 \
  "$(model_count_before inplace-update-start "$HCP_NS/ip" "$OPEN")"
still_before c "$OPEN" "the hold, the scale and the quiet 100 minutes"

# ---- the window opens: the in-place update starts -----------------------------------

SCENARIO=window
started() { [ "$(model_count inplace-update-start "$HCP_NS/ip")" -ge 1 ]; }
check "the in-place update starts when the window opens" wait_for 70 started
first=$(model_times inplace-update-start "$HCP_NS/ip" | sort | head -1)
set_at=$(model_times inplace-target-set "$HCP_NS/ip" | sort | head -1)
echo "# figure: window opened $OPEN; target written $set_at; first in-place update $first (simulated)"
check "the target went through at or after the boundary" eval '[[ $(epoch "$set_at") -ge $(epoch "$OPEN") ]]'
check "the first in-place update is not before the boundary" eval '[[ $(epoch "$first") -ge $(epoch "$OPEN") ]]'
lag=$(model_records | jq -rs --arg o "$HCP_NS/ip" '[.[] | select(.event == "inplace-update-start" and .object == $o)][0].real')
open_real=$(grep -m1 -E "WindowOpened kind=NodePool namespace=$NS name=ip( |$)" "${CTL_LOG[c]}" | awk '{print $1}')
d=$(awk -v a="$(date -u -d "$lag" +%s.%N 2>/dev/null || echo 0)" -v b="$(date -u -d "$open_real" +%s.%N 2>/dev/null || echo 0)" \
  'BEGIN { printf "%.3f", a - b }')
echo "# figure: InPlace window open ($open_real, controller) -> first in-place update ($lag, model): $d s real"
in_range "in-place initiation within $(real_s 1) s (real) of the window opening" "$d" 0 "$(real_s 1)"
done_all() { [ "$(model_count inplace-update-done "$HCP_NS/ip")" -ge 4 ]; }
check "the in-place update completes in the window" wait_for 30 done_all

stop_ctl c
model_stop
summary
