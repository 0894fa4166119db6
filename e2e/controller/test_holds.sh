#!/usr/bin/env bash
# End-to-end: the admission holds (DESIGN.md 3.6) with the HyperShift /
# Cluster API behaviour model (e2e/model) beside the controller. The real
# kube-apiserver calls the controller's webhooks over TLS (a
# MutatingWebhookConfiguration with clientConfig.url, scoped to this test's
# namespaces); the question each check answers is what HyperShift and
# Cluster API would have started, read from the model's record.
#
#   1. A release requested on a Friday evening is held (spec stays, the
#      request is recorded) and the control plane starts rolling only when
#      Saturday's window opens; the figure is window open -> initiation.
#   0. While restricted, a NodePool release is held at the NodePool
#      (spec stays, the request is recorded, HyperShift writes no new
#      template) and its MachineDeployment is not paused: a NodePool scale from
#      3 to 5 reaches it and Cluster API scales within 5 s, a machine deleted
#      by remediation is replaced, and the held request goes through when
#      the window opens (the first replacement starts after the boundary,
#      none before).
#   2. A node rollout started in the window is paused when it closes: no
#      replacement starts more than 1 s (real) after the boundary.
#   3. A NodePool version bump while restricted, mid-rollout: the release is
#      held at the NodePool, HyperShift's pause deletion is undone in the
#      same write (no gap, no fight), while a scale from 4 to 5 reaches the
#      MachineDeployment at once; no write loop.
#   4. Bad input straight to the webhook (not JSON, another resource) gets a
#      clear answer; every replica killed: with failurePolicy Fail the API
#      server refuses HyperShift's and a person's writes to opted-in objects,
#      and once a replica is back a held change still waits for the window.
#
# `make e2e-capi` runs it on the "capi" instance too, where Cluster API's own
# controllers scale, remediate and roll the machines the model records.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

CLOSE=2026-03-07T05:00:00Z
SIM0=2026-03-06T18:00:00Z # Friday 18:00; the window opens Saturday 01:00
OPEN=2026-03-07T01:00:00Z
SCALE=600                 # a real second is ten simulated minutes: 42 s to the window
WH_NAME=hcp-e2e-holds-$$

webhook_scenario_begin
# A remediated machine's replacement: the model's comes at once; Cluster
# API's (instance "capi") after its MachineHealthCheck marks the machine and
# its MachineSet deletes and replaces it, each reconciled at most once a
# second; its machines take real seconds to come up, so the clock runs 3
# times slower (126 s to the window, whose 4 h then take 72 s), and np1's
# rollout in the window has 8 machines (about 12 s each: it cannot finish).
REMEDIATION_WAIT=5
ROLL_N=4 # the machines of np1's rollout in the window (section 2)
if [ "${E_CAPI:-}" = 1 ]; then REMEDIATION_WAIT=60 SCALE=200 ROLL_N=8; fi

NS=$(new_ns holds)
HCP_NS=$NS-a
WPORT=$(free_port)
POLICY=$(weekly_policy Saturday 01:00 4h)
mk_policy "$NS" weekend "$POLICY" || not_ok "policy"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
# The pools' requests here are about windows: the control plane has
# completed the releases they ask for (hc_completed).
hc_completed "$NS" a "$REL1" "$REL2" || not_ok "HostedCluster history"
api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"'"$REL0"'"}}}' >/dev/null
holds_webhook_config "$WPORT" "$NS" "$HCP_NS" | k apply -f - >/dev/null || not_ok "webhook configuration"

SCENARIO=start
model_scenario_start c --replacement-duration 80m
# The pools: the model creates their MachineDeployments, as HyperShift does.
mk_pool np1 Replace 2
mk_pool np2 Replace 3 weekend a true
MD=$CAPI/namespaces/$HCP_NS/machinedeployments/np1
MD2=$CAPI/namespaces/$HCP_NS/machinedeployments/np2
check "the model created the MachineDeployments and their machines" wait_for 20 eval \
  'model_machines "$HCP_NS/np1" 2 && model_machines "$HCP_NS/np2" 3'
sleep 1
check_eq "restricted, merely waiting: the MachineDeployment is not paused" unpaused "$(pause_state "$MD")"

# ---- 0. a pool waiting with a change held: scaling and remediation go on ------------

SCENARIO=waiting
ver2() { get "$MD2" '.spec.template.spec.version // ""'; }
v2=$(ver2)
out=$(api PATCH "$(np_path "$NS" np2)" "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}")
check_eq "np2's release is held at the NodePool (spec.release.image stays)" "$REL0" \
  "$(jq -r .spec.release.image <<<"$out")"
check_eq "the request is recorded on the NodePool" "{\"release\":{\"image\":\"$REL1\"}}" \
  "$(jq -r '.metadata.annotations["changemanagement.hypershift.openshift.io/requested-nodepool-spec"]' <<<"$out")"
sleep 1
WHY="template version was '$v2', is '$(ver2)'"
check "HyperShift writes no new template (it never saw the request)" \
  eval '[[ $v2 == *4.17.0* && $(ver2) == "$v2" ]]'
np_pending() { [ "$(cond "$(np_path "$NS" np2)" ChangesPending reason)" = ChangesBlocked ]; }
check "np2's ChangesPending says the change is held" wait_for 5 np_pending
check_contains "naming it" "The held change (release $REL1) waits for the next permitted window" \
  "$(cond "$(np_path "$NS" np2)" ChangesPending message)"
api PATCH "$(np_path "$NS" np2)" '{"spec": {"replicas": 5}}' >/dev/null
t0=$(now_us)
scaled2() { [ "$(get "$MD2" .spec.replicas)" = 5 ] && [ "$(model_count scale "$HCP_NS/np2")" -ge 1 ]; }
check "the scale from 3 to 5 reaches the MachineDeployment and Cluster API scales" wait_for 5 scaled2
echo "# figure: restricted, change held: NodePool scale 3 -> 5 to Cluster API's scale (model record) in $((($(now_us) - t0) / 1000)) ms"
five_running() { [ "$(running_machines np2)" = 5 ]; }
check "np2's 5 machines run" wait_for "$REMEDIATION_WAIT" five_running
victim=$(running_json np2 | jq -r '.[0].metadata.name // ""')
remediate_machine "$victim" || not_ok "machine $victim remediated"
t0=$(now_us)
replacement_made() { [ "$(model_count remediation-replacement "$HCP_NS/np2")" -ge 1 ]; }
check "a machine deleted by remediation is replaced" wait_for "$REMEDIATION_WAIT" replacement_made
echo "# figure: restricted, change held: machine deleted -> replacement created in $((($(now_us) - t0) / 1000)) ms"
check_eq "np2's MachineDeployment stays unpaused" unpaused "$(pause_state "$MD2")"
check_eq "no replacement (rollout) started on np2" 0 "$(model_count replacement-start "$HCP_NS/np2")"

# ---- 1. the release is held and starts when the window opens ------------------------

SCENARIO=release
# initiations TO [BEFORE]: the model's control-plane initiations to release
# TO (simulated times, one a line), those before instant BEFORE only.
initiations() {
  model_records | jq -r --arg o "$NS/a" --arg to "$1" --arg b "${2:-9999}" \
    'select(.event == "controlplane-initiation" and .object == $o and .to == $to and .at < $b) | .at'
}
out=$(api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"'"$REL1"'"}}}')
check_eq "the write is admitted; spec.release.image stays" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
check_eq "the request is recorded" "$REL1" \
  "$(jq -r '.metadata.annotations["changemanagement.hypershift.openshift.io/requested-release-image"]' <<<"$out")"
pending() { [ "$(cond "$(hc_path "$NS" a)" ChangesPending status)" = True ]; }
check "ChangesPending is True while held" wait_for 10 pending
initiated_rel1() { [ -n "$(initiations "$REL1")" ]; }
check "the control plane starts rolling to the held release" wait_for $((60 * 600 / SCALE)) initiated_rel1
check_eq "no control-plane initiation before the window (model record)" "" "$(initiations "$REL1" "$OPEN")"
# Real time from the controller's WindowOpened (its log line's timestamp)
# to the model's initiation (the record's real time): no clock offset
# between the two processes enters.
at=$(initiations "$REL1" | head -1)
real_init=$(model_records | jq -r --arg a "$at" 'select(.at == $a) | .real' | head -1)
real_open=$(grep -m1 -E "WindowOpened kind=HostedCluster namespace=$NS name=a( |$)" "${CTL_LOG[c]}" | awk '{print $1}')
lag=$(awk -v a="$(date -u -d "$real_init" +%s.%N 2>/dev/null || echo 0)" \
  -v b="$(date -u -d "$real_open" +%s.%N 2>/dev/null || echo 0)" 'BEGIN { printf "%.3f", a - b }')
echo "# figure: window open ($real_open, controller) -> control-plane initiation ($real_init, model): $lag s real"
in_range "initiation within $(real_s 1) s (real) of the window opening" "$lag" 0 "$(real_s 1)"
check_eq "the held release is applied" "$REL1" "$(get "$(hc_path "$NS" a)" .spec.release.image)"
check_eq "the request annotation is gone" "null" \
  "$(get "$(hc_path "$NS" a)" '.metadata.annotations["changemanagement.hypershift.openshift.io/requested-release-image"]')"
# np2's held request goes through at the window: the controller applies
# it to the NodePool, HyperShift writes the new template, the rollout
# starts.
np2_started() { [ "$(model_count replacement-start "$HCP_NS/np2")" -ge 1 ]; }
check "np2's held request goes through when the window opens" wait_for 20 np2_started
check_eq "np2's release is applied" "$REL1" "$(get "$(np_path "$NS" np2)" .spec.release.image)"
check_eq "and its request annotation is gone" null \
  "$(get "$(np_path "$NS" np2)" '.metadata.annotations["changemanagement.hypershift.openshift.io/requested-nodepool-spec"]')"
first=$(model_times replacement-start "$HCP_NS/np2" | sort | head -1)
echo "# figure: np2's first replacement started at $first (simulated; window opened $OPEN)"
check "not before the boundary" eval '[[ $(epoch "$first") -ge $(epoch "$OPEN") ]]'

# ---- 2. a node rollout in the window, paused when it closes --------------------------

SCENARIO=rollout
# In the window: scale to ROLL_N machines first, then a new release:
# ROLL_N replacements, one at a time, cannot finish before 05:00 (the
# model's 4, 80 simulated minutes each: the fourth would start after it;
# Cluster API's 8, about 12 s real each, above).
np_patch() { api PATCH "$(np_path "$NS" np1)" "{\"spec\": $1}" >/dev/null; }
np_patch "{\"replicas\": $ROLL_N}"
all_there() { [ "$(machines_json np1 | jq length)" -ge "$ROLL_N" ] 2>/dev/null; }
check "in the window, the scale to $ROLL_N machines goes through" wait_for 10 all_there
np_patch "{\"release\": {\"image\": \"$REL1\"}}"
# The first replacement's simulated start, read once one exists or the
# window closed (Cluster API's pace on a loaded machine varies: the
# claim is "in the window", not a real-time figure).
rs_started() { [ "$(model_count replacement-start "$HCP_NS/np1")" -ge 1 ]; }
rs_or_closed() { rs_started || ! before_sim c "$CLOSE"; }
wait_for $((4 * 3600 / SCALE + 10)) rs_or_closed
first=$(model_times replacement-start "$HCP_NS/np1" | sort | head -1)
echo "# figure: np1's first replacement started at ${first:-never} (simulated; window $OPEN to $CLOSE)"
check "the rollout starts in the window" eval '[ -n "$first" ] && [[ $(epoch "$first") -lt $(epoch "$CLOSE") ]]'
sleep_until_sim c "$CLOSE" 1
wait_for 10 is_state "$MD" paused+marker
check_eq "the window closed mid-rollout: the MachineDeployment is paused" "paused+marker" "$(pause_state "$MD")"
sleep 4 # 40 simulated minutes
starts=$(model_times replacement-start "$HCP_NS/np1")
# Beside real Cluster API a machine is its MachineSet controller carrying
# out its MachineDeployment controller's earlier decision (a MachineSet
# given a machine more), by its own pace: the decision is what the pause
# governs (none_after in e2e/model/lib.sh says the same).
decided=replacement-start
if [ "${E_CAPI:-}" = 1 ]; then decided=machineset-scale-up; fi
late=$(model_times "$decided" "$HCP_NS/np1" | awk -v c="$(epoch "$CLOSE")" -v k="$SCALE" '{ cmd = "date -u -d " $1 " +%s.%N"; cmd | getline t; close(cmd);
  if (t > c + 1 * k) print $1 }')
echo "# figure: replacements started in the window: $(wc -l <<<"$starts") (last $(tail -1 <<<"$starts")), done: $(model_count replacement-done "$HCP_NS/np1"); $decided after the close: ${late:-none}"
check_eq "no replacement starts more than 1 s (real) after the window closed ($decided)" "" "$late"
if [ "${E_CAPI:-}" = 1 ]; then
  check "the record has Cluster API's decisions: a machine added for every replacement started" \
    test "$(model_decided "$HCP_NS/np1")" -ge "$(wc -l <<<"$starts")"
fi
in_range "the window closed mid-rollout (replacements done of $ROLL_N)" \
  "$(model_count replacement-done "$HCP_NS/np1")" 0 $((ROLL_N - 1))

# ---- 3. workers held while restricted ------------------------------------------------

SCENARIO=workers
tmpl0=$(get "$MD" '.spec.template.spec.version // ""')
rs0=$(model_count replacement-start "$HCP_NS/np1")
md_key="MachineDeployment $HCP_NS/np1"
writes_of() { model_summary | jq -r --arg k "$1" ".$2[\$k] // 0"; }
np_patch "{\"release\": {\"image\": \"$REL2\"}, \"replicas\": $((ROLL_N + 1))}"
check_eq "the NodePool's release stays (held at the NodePool)" "$REL1" \
  "$(get "$(np_path "$NS" np1)" .spec.release.image)"
md_scaled() { [ "$(get "$MD" .spec.replicas)" = $((ROLL_N + 1)) ]; }
t0=$(now_us)
check "the scale from $ROLL_N to $((ROLL_N + 1)) reaches the MachineDeployment" wait_for 5 md_scaled
scale_ms=$((($(now_us) - t0) / 1000))
echo "# figure: NodePool scale $ROLL_N -> $((ROLL_N + 1)) reached the MachineDeployment in $scale_ms ms"
sleep 3
tmpl1=$(get "$MD" '.spec.template.spec.version // ""')
WHY="template version was '$tmpl0', is '$tmpl1'"
check "the template stays at 4.17.1 (HyperShift never saw 4.17.2)" \
  eval '[[ $tmpl0 == *4.17.1* && $tmpl1 == "$tmpl0" ]]'

check_eq "the pause stayed through HyperShift's reconciles" "paused+marker" "$(pause_state "$MD")"
check_eq "no replacement started outside the window" "$rs0" "$(model_count replacement-start "$HCP_NS/np1")"
# No write loop: restricted with the change held, over 10 real seconds (100
# simulated minutes of HyperShift reconciling on every event), the
# MachineDeployment and the NodePool are written at most 3 times by anyone.
w0=$(writes_of "$md_key" writes) o0=$(writes_of "$md_key" observed) c0=$(metric c hcp_controller_writes_total)
sleep 10
w1=$(writes_of "$md_key" writes) o1=$(writes_of "$md_key" observed) c1=$(metric c hcp_controller_writes_total)
echo "# figure: held for 100 simulated minutes: the model wrote the MachineDeployment $((w1 - w0)) times, it changed $((o1 - o0)) times, the controller wrote $((${c1%.*} - ${c0%.*})) objects"
if [ "${E_CAPI:-}" = 1 ]; then
  # Cluster API's controllers write its status as its machines come up:
  # a loop is between HyperShift (the model) and the controller.
  in_range "no write loop on the held MachineDeployment (HyperShift's writes)" "$((w1 - w0))" 0 3
else
  in_range "no write loop on the held MachineDeployment" "$((o1 - o0))" 0 3
fi
in_range "the controller writes nothing in steady state" "$((${c1%.*} - ${c0%.*}))" 0 0
check_eq "still no replacement" "$rs0" "$(model_count replacement-start "$HCP_NS/np1")"
unheld=$(metric c 'change_management_unheld_changes_total\{kind="NodePool",system="worker-nodes"\}')
unheld="$unheld $(metric c 'change_management_unheld_changes_total\{kind="HostedCluster",system="control-plane"\}')"
check_eq "a rollout the close found under way is not counted as past the webhooks" "0 0" "$unheld"
[ "$unheld" = "0 0" ] || grep 'change not held' "${CTL_LOG[c]}" | cut -c1-300 | sed 's/^/#   controller: /'

# ---- 4. bad input, and every replica down --------------------------------------------

SCENARIO=webhook
code=$(curl -s -o "$CTL_TMP/bad" -w '%{http_code}' --cacert "$CERT" -X POST \
  --data-binary '{"apiVersion":' "https://127.0.0.1:$WPORT/hold/hostedclusters")
check_eq "a body that is not JSON: HTTP 400" 400 "$code"
check_contains "the answer says why" "not JSON" "$(cat "$CTL_TMP/bad")"
review=$(jq -nc '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
  request: {uid: "x-1", operation: "UPDATE", resource: {group: "apps", version: "v1", resource: "deployments"},
            kind: {group: "apps", version: "v1", kind: "Deployment"}, namespace: "n", name: "d",
            object: {}, oldObject: {}}}')
out=$(curl -s --cacert "$CERT" -X POST --data-binary "$review" "https://127.0.0.1:$WPORT/hold/hostedclusters")
check_eq "another resource: refused (failurePolicy Fail), not silently admitted" false \
  "$(jq -r .response.allowed <<<"$out")"
check_contains "naming the resource" "not apps/deployments n/d" "$(jq -r .response.status.message <<<"$out")"
check "logged" grep -q "refused unchecked" "${CTL_LOG[c]}"

stop_ctl c KILL
out=$(api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"'"$REL0"'"}}}' 2>&1)
check_contains "every replica down: the API server refuses the release write" "failed calling webhook" "$out"
out=$(api PATCH "$MD" '{"spec":{"replicas":3}}' 2>&1)
check_contains "and HyperShift's MachineDeployment writes (scaling too)" "failed calling webhook" "$out"
check_eq "nothing changed" "$REL1" "$(get "$(hc_path "$NS" a)" .spec.release.image)"

start_ctl c "$NS" "$SIM0" "$SCALE" --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || not_ok "replica back"
# Its clock restarts at Friday 22:00: restricted again.
cp0=$(model_count controlplane-initiation "$NS/a")
out=$(api PATCH "$(hc_path "$NS" a)" '{"spec":{"release":{"image":"'"$REL0"'"}}}')
check_eq "a replica back: the write is held again" "$REL1" "$(jq -r .spec.release.image <<<"$out")"
sleep 2
check_eq "and no initiation outside the window" "$cp0" "$(model_count controlplane-initiation "$NS/a")"
adm=$(metric c 'hcp_controller_admission_requests_total\{result="patched"\}')
in_range "the held writes are counted" "${adm:-0}" 1 1000

stop_ctl c
model_stop
summary
