#!/usr/bin/env bash
# End-to-end: the backstop of the admission holds (DESIGN.md 3.6), with the
# HyperShift / Cluster API behaviour model (e2e/model) beside the controller.
#
# The API server's webhook configuration has failurePolicy Ignore and points
# at a port nobody serves: to the API server that is every replica down (or
# no webhook installed). The controller runs with its webhooks on, so it
# believes a restricted pool merely waiting needs no pause. Restricted (a
# Friday afternoon; the window opens Saturday 01:00):
#
#   1. A release written to the HostedCluster is not held: HyperShift (the
#      model) starts the control-plane update in the reconcile that sees it.
#      The controller counts it (change_management_unheld_changes_total
#      {kind="HostedCluster"}), says so in a ChangeNotHeld Event, and does not
#      interrupt the update.
#   2. A NodePool version bump: not held at the NodePool, so HyperShift
#      writes a new MachineDeployment template and Cluster API starts a
#      rollout. The controller counts it
#      ({kind="NodePool"}) and pauses the MachineDeployment, annotation and
#      spec.paused; the replacement already started (or, on Cluster API's
#      own controllers, the one its new MachineSet was already scaled for)
#      finishes, no other starts. HyperShift's NodePool reconcile deletes
#      the annotation (no webhook keeps it); spec.paused, which HyperShift
#      never writes, keeps the rollout stopped, so the controller does not
#      fight over the annotation.
#   3. The webhook answers again: a new release is held (HostedCluster and
#      NodePool), and no initiation happens outside the window; the rollout
#      and the held release start when the window opens.
#
# `make e2e-capi` runs it on the "capi" instance too (CTL_E2E_INSTANCE=capi),
# where Cluster API's own controllers act on the machines the model records.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-06T14:00:00Z # Friday 14:00
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=600                 # a real second is ten simulated minutes: 66 s to the window
WH_NAME=hcp-e2e-backstop-$$
UNHELD=change_management_unheld_changes_total

webhook_scenario_begin

NS=$(new_ns backstop)
HCP_NS=$NS-a
WPORT=$(free_port)
DEAD=$(free_port) # nobody listens here
mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
WH_FAILURE_POLICY=Ignore holds_webhook_config "$DEAD" "$NS" "$HCP_NS" | k apply -f - >/dev/null || not_ok "webhook configuration"

model_scenario_start c --replacement-duration 50m --hc-status
api POST "$HS/namespaces/$NS/nodepools" "$(jq -nc --arg img "$REL0" '{
  apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
  metadata: {name: "np1", annotations: {"changemanagement.hypershift.openshift.io/policy": "weekend"}},
  spec: {clusterName: "a", replicas: 3, management: {upgradeType: "Replace"},
         release: {image: $img}}}')" application/json >/dev/null || not_ok "NodePool np1"
MD=$CAPI/namespaces/$HCP_NS/machinedeployments/np1
check "the model created the MachineDeployment and its machines" wait_for 20 model_machines "$HCP_NS/np1" 3
check_eq "restricted, merely waiting: the MachineDeployment is not paused" unpaused "$(pause_state "$MD")"
unheld() { metric c "$UNHELD\\{kind=\"$1\",system=\"[^\"]*\"\\}"; }
check_eq "nothing counted yet (HostedCluster)" 0 "$(unheld HostedCluster)"
check_eq "nothing counted yet (NodePool)" 0 "$(unheld NodePool)"

# ---- 1. a release that got past the webhook ------------------------------------------

SCENARIO=release
cp_to() { model_records | jq -r --arg o "$NS/a" --arg to "$1" \
  'select(.event == "controlplane-initiation" and .object == $o and .to == $to) | .at'; }
out=$(api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"'"$REL1"'"}}}')
check_eq "the webhook is not called: the release is stored as written" "$REL1" \
  "$(jq -r .spec.release.image <<<"$out")"
counted_hc() { [ "$(unheld HostedCluster)" = 1 ]; }
check "the controller counts the change that got past" wait_for 10 counted_hc
started1() { [ -n "$(cp_to "$REL1")" ]; }
check "in the gap HyperShift started the control-plane update (model record)" wait_for 10 started1
echo "# in the gap: the model initiated the control plane to 4.17.1 at $(cp_to "$REL1" | head -1) (simulated), outside the window"
has_event() { events "$NS" "$1" | grep -qx "$2"; }
check "a ChangeNotHeld Event on the HostedCluster" wait_for 5 has_event a ChangeNotHeld
check_eq "the update is not interrupted: the release stays" "$REL1" \
  "$(get "$(hc_path "$NS" a)" .spec.release.image)"

# ---- 2. a node rollout that got past the webhook --------------------------------------

SCENARIO=rollout
api PATCH "$(np_path "$NS" np1)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}" >/dev/null
counted_np() { [ "$(unheld NodePool)" = 1 ]; }
check "the controller counts the rollout that got past" wait_for 10 counted_np
spec_paused() { get "$MD" '"\(.spec.paused // false) \(.metadata.annotations["changemanagement.hypershift.openshift.io/spec-paused-by"] // "-")"'; }
md_paused_by_us() { [ "$(spec_paused)" = "true hcp-controller" ]; }
check "and pauses the MachineDeployment: spec.paused, with our marker" wait_for 5 md_paused_by_us
check "a ChangeNotHeld Event on the NodePool" wait_for 5 has_event np1 ChangeNotHeld
rs_gap=$(model_count replacement-start "$HCP_NS/np1")
# What Cluster API had committed to before the pause (committed_machines).
committed=$(committed_machines "$HCP_NS" np1)
echo "# in the gap: Cluster API started $rs_gap replacement(s) at $(model_times replacement-start "$HCP_NS/np1" | tr '\n' ' ')(simulated) before the pause, its new MachineSet scaled for $committed"
in_range "at most one replacement started before the pause" "$rs_gap" 0 1
in_range "at most one committed to (the new MachineSet's replicas)" "$committed" 0 1
[ "$committed" -gt "$rs_gap" ] 2>/dev/null && rs_gap=$committed
# Without the webhook HyperShift deletes the pause annotation on every
# NodePool reconcile; spec.paused, which it never writes, keeps the rollout
# stopped, so the controller does not put the annotation back (no fight).
r0=$(metric c hcp_controller_pause_reassertions_total)
sleep 6 # 60 simulated minutes: the replacement under way (50 min) finishes
r1=$(metric c hcp_controller_pause_reassertions_total)
echo "# figure: without the webhook, 6 s (real): the annotation is $(pause_state "$MD"), spec.paused $(spec_paused); re-assertions $((${r1%.*} - ${r0%.*})); replacements started $(model_count replacement-start "$HCP_NS/np1"), done $(model_count replacement-done "$HCP_NS/np1")"
check_eq "no fight: the deleted annotation is not put back" "${r0%.*}" "${r1%.*}"
check "spec.paused stays through HyperShift's reconciles" md_paused_by_us
check_eq "no other replacement started once handled (than those started or committed to before)" "$rs_gap" \
  "$(model_count replacement-start "$HCP_NS/np1")"

# ---- 3. the webhook answers again -----------------------------------------------------

SCENARIO=back
WH_FAILURE_POLICY=Ignore holds_webhook_config "$WPORT" "$NS" "$HCP_NS" | k apply -f - >/dev/null ||
  not_ok "webhook configuration back"
sleep 1
check "spec.paused stays" md_paused_by_us
r0=$(metric c hcp_controller_pause_reassertions_total)
rs0=$(model_count replacement-start "$HCP_NS/np1")
out=$(api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"'"$REL2"'"}}}')
check_eq "a new release is held again" "$REL1" "$(jq -r .spec.release.image <<<"$out")"
out=$(api PATCH "$(np_path "$NS" np1)" "{\"spec\": {\"release\": {\"image\": \"$REL2\"}}}")
check_eq "and a NodePool release is held at the NodePool" "$REL1" "$(jq -r .spec.release.image <<<"$out")"
sleep 6 # 60 simulated minutes more
r1=$(metric c hcp_controller_pause_reassertions_total)
echo "# figure: with the webhook back, 6 s (real): re-assertions $((${r1%.*} - ${r0%.*})), replacements started $(($(model_count replacement-start "$HCP_NS/np1") - rs0)), done $(model_count replacement-done "$HCP_NS/np1")"
check_eq "no re-assertion" "${r0%.*}" "${r1%.*}"
check_eq "no replacement started once handled" "$rs0" "$(model_count replacement-start "$HCP_NS/np1")"
check_eq "no control-plane initiation to the held release" "" "$(cp_to "$REL2")"
check_eq "the held request counts as nothing that got past" 1 "$(unheld HostedCluster)"

# The window opens: the rollout resumes and the held release starts, not before.
resumed() { [ "$(model_count replacement-start "$HCP_NS/np1")" -gt "$rs0" ] && [ -n "$(cp_to "$REL2")" ]; }
check "at the window the rollout resumes and the held release starts" wait_for 90 resumed
resumed || { model_records | jq -c --arg o "$HCP_NS/np1" 'select(.object == $o)' | tail -8 | sed 's/^/#   /'
    echo "#   pause: $(pause_state "$MD"); machines: $(get "$MD" .status)"; }
first_after=$(model_times replacement-start "$HCP_NS/np1" | sort | sed -n "$((rs0 + 1))p")
cp2=$(cp_to "$REL2" | head -1)
echo "# figure: after the window opened ($OPEN): replacement resumed at $first_after, control plane to 4.17.2 at $cp2 (simulated)"
check "the resumed replacement is not before the window" eval '[[ $(epoch "$first_after") -ge $(epoch "$OPEN") ]]'
check "the held release is not initiated before the window" eval '[[ $(epoch "$cp2") -ge $(epoch "$OPEN") ]]'
check_eq "the counts did not move in the window" "1 1" "$(unheld HostedCluster) $(unheld NodePool)"
check_eq "spec.paused of ours cleared in the window" "false -" "$(spec_paused)"

stop_ctl c
model_stop
summary
