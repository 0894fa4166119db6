#!/usr/bin/env bash
# End-to-end: a held request follows its owner's newest intent (DESIGN.md
# 3.13), with real kubectl against the real API server, beside real Cluster
# API (instance "capi", E_CAPI=1) and the behaviour model's HyperShift half
# acting as HyperShift's ServiceAccount. The webhook configuration is the
# chart's (its matchConditions: an update of a pool carrying a request is
# sent unless HyperShift or the controller writes it), and the controller
# runs as a ServiceAccount of its own, as the chart deploys it.
#
# Six Replace pools of one machine each run 4.17.0 and are restricted on a
# Friday evening (the window opens Saturday 01:00). Each is asked for
# 4.17.1 (held at the pool), then:
#   - csa:   reverted by `kubectl apply` of the old manifest (client-side
#            apply, Argo CD's default): withdrawn;
#   - ssa:   reverted by the GitOps tool's server-side apply (Flux's field
#            manager): withdrawn;
#   - kub:   asked for by the tool's server-side apply, reverted by
#            `kubectl apply --server-side` (a second field manager): withdrawn;
#   - mix:   one client-side apply reverts the release and asks for another
#            configuration: the release withdrawn, the configuration held;
#   - ann:   `kubectl annotate ...-` of the record: withdrawn;
#   - carry: asked for by a merge patch (OCM), then written by everything
#            that only carries the field along: HyperShift's full update (as
#            its ServiceAccount), `kubectl label` and `annotate` of something
#            else, another controller's full update, the tool's re-apply of
#            the requested value (held again), and merge and JSON patches of
#            the running value (warned every time): never withdrawn.
# Each withdrawal: the answer's warning (as kubectl prints it), the record
# gone, the audit record, a ChangeWithdrawn Event, a `withdrawn`
# notification, the companion's audit and ChangesPending. At the window:
# nothing of a withdrawn request starts (no new MachineSet or Machine,
# spec.release and status.version stay 4.17.0), while mix's configuration
# and carry's release go and roll.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

SIM0=2026-03-06T16:00:00Z # Friday 16:00
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
SCALE=120                 # 270 s real to the window: the pools' machines come
                          # up, and some 40 kubectl writes, with time to spare
                          # (shown at load average 2-6 on 2 cores, another
                          # tree's e2e run beside it; still_before says when
                          # a machine was too slow)
WH_NAME=hcp-e2e-withdraw-$$
REQ=$CM/requested-nodepool-spec
HYPERSHIFT=system:serviceaccount:hypershift:operator
FLUX=system:serviceaccount:flux-system:kustomize-controller
OTHER=system:serviceaccount:other:controller
POOLS="csa ssa kub mix ann carry"
WITHDRAWN_POOLS="csa ssa kub mix ann"

webhook_scenario_begin
trap 'recv_stop; webhook_scenario_cleanup' EXIT
NS=$(new_ns withdraw)
HCP_NS=$NS-a

# kc_as USER ARGS: kubectl as USER (impersonated, with the admin's rights),
# stdout and stderr (its warnings) together.
kc_as() { local u=$1; shift; kubectl --kubeconfig "$KCFG" --as "$u" --as-group system:masters "$@" 2>&1; }
# kc ARGS: kubectl as the admin, stdout and stderr together.
kc() { kubectl --kubeconfig "$KCFG" "$@" 2>&1; }
# manifest NAME IMAGE [CONFIG]: a NodePool's manifest as Git holds it.
manifest() {
  jq -nc --arg n "$1" --arg ns "$NS" --arg i "$2" --arg c "${3:-}" '{
    apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
    metadata: {name: $n, namespace: $ns, annotations: {"changemanagement.hypershift.openshift.io/policy": "weekend"}},
    spec: ({clusterName: "a", replicas: 1, management: {upgradeType: "Replace"}, release: {image: $i}}
           + (if $c == "" then {} else {config: [{name: $c}]} end))}'
}
# flux_apply NAME IMAGE: the GitOps tool's server-side apply (Flux's field
# manager, forcing ownership as Flux does), as its ServiceAccount.
flux_apply() { manifest "$1" "$2" | kc_as "$FLUX" apply --server-side --force-conflicts --field-manager kustomize-controller -f -; }
record() { np_get "$1" ".metadata.annotations[\"$REQ\"] // \"\""; }
recorded_release() { record "$1" | jq -r '.release.image // ""' 2>/dev/null; }
ann_of() { np_get "$1" ".metadata.annotations[\"$CM/$2\"] // \"\""; }
# warning OUTPUT: kubectl's Warning lines of OUTPUT, without the prefix.
warnings() { sed -n 's/^Warning: //p' <<<"$1"; }
machinesets_of() { api GET "$CAPI/namespaces/$HCP_NS/machinesets" | jq -r --arg p "$1" '[.items[] | select(.metadata.labels["cluster.x-k8s.io/deployment-name"] == $p) | .metadata.name] | sort | join(" ")'; }
machines_of() { machines_json "$1" | jq -r '[.[].metadata.name] | sort | join(" ")'; }
admission_calls() { metrics a | awk '/^hcp_controller_admission_requests_total/ { s += $2 } END { print s + 0 }'; }

# ---- the controller, HyperShift, the receiver --------------------------------

must kubeconfig_sa "$NS" hcp-controller "$CTL_TMP/controller.kubeconfig" || { summary; exit 1; }
kubeconfig_as "$HYPERSHIFT" "$CTL_TMP/hypershift.kubeconfig" || not_ok "HyperShift's kubeconfig"
SELF=system:serviceaccount:$NS:hcp-controller
WPORT=$(free_port)
# The chart's holds, with the controller's ServiceAccount for the chart's.
chart_webhook_config "$WPORT" "$NS" "$HCP_NS" |
  jq -c --arg self "$SELF" 'walk(if type == "string" then gsub("system:serviceaccount:default:hcp-hcp-controller"; $self) else . end)' |
  k apply -f - >/dev/null || not_ok "webhook configuration (the chart's)"
RECV=$CTL_TMP/recv
mkdir -p "$RECV"
RPORT=$(free_port)
recv_start "$RECV" "$RPORT" || not_ok "notification receiver"
printf '%s\n' "notifications:" "  endpoints: [{name: recv, url: \"http://127.0.0.1:$RPORT/hook\"}]" >"$CTL_TMP/guard.yaml"
mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "policy"
mk_hc "$NS" a policy=weekend || not_ok "HostedCluster"
hc_completed "$NS" a "$REL1" || not_ok "HostedCluster history"
CTL_CONTROLLER_KUBECONFIG=$CTL_TMP/controller.kubeconfig start_ctl a "$NS" "$SIM0" "$SCALE" \
  --webhook-bind-address "127.0.0.1:$WPORT" --webhook-cert-file "$CERT" --webhook-key-file "$KEY" \
  --hypershift-users "$HYPERSHIFT,$SELF" --guard-config "$CTL_TMP/guard.yaml" -v 2 ||
  { not_ok "controller starts"; summary; exit 1; }
KCFG=$CTL_TMP/hypershift.kubeconfig model_start "$NS" "$SIM0" "$SCALE" "${CTL_T0[a]}" --workers "$HS_WORKERS" ||
  { not_ok "HyperShift's model starts (as its ServiceAccount)"; summary; exit 1; }

# The pools, as their owners create them: csa and mix by `kubectl apply`,
# ssa and kub by the GitOps tool's server-side apply, ann and carry by
# OCM's create.
for p in csa mix; do manifest $p "$REL0" "$([ $p = mix ] && echo c1)" | kc apply -f - >/dev/null || not_ok "NodePool $p"; done
for p in ssa kub; do flux_apply $p "$REL0" >/dev/null || not_ok "NodePool $p"; done
for p in ann carry; do mk_pool $p Replace 1; done
settled() {
  local p
  for p in $POOLS; do
    [ "$(running_machines $p)" = 1 ] && [ "$(np_get $p .status.version)" = 4.17.0 ] && np_labelled $p || return 1
  done
}
check "the six pools run 4.17.0 on one machine each (Cluster API), opted in" wait_for 90 settled
declare -A MS0 M0
for p in $POOLS; do MS0[$p]=$(machinesets_of $p) M0[$p]=$(machines_of $p); done

# ---- restricted: 4.17.1 asked for, held at each pool -------------------------

SCENARIO=held
out=$(manifest csa "$REL1" | kc apply -f -)
check_contains "csa: kubectl apply of 4.17.1 is held (the warning kubectl prints)" \
  "spec.release: held until changes are permitted (next window $OPEN)" "$(warnings "$out")"
manifest mix "$REL1" c1 | kc apply -f - >/dev/null
for p in ssa kub; do flux_apply $p "$REL1" >/dev/null; done
for p in ann carry; do
  kc_as ocm patch nodepool -n "$NS" $p --type merge -p "{\"spec\": {\"release\": {\"image\": \"$REL1\"}}}" >/dev/null
done
for p in $POOLS; do
  check_eq "$p: spec.release.image stays 4.17.0, 4.17.1 is recorded" "$REL0 $REL1" \
    "$(np_get $p .spec.release.image) $(recorded_release $p)"
done
check_eq "carry: who asked is recorded" ocm "$(ann_of carry requested-by)"

# ---- reverts: each withdraws its request --------------------------------------

SCENARIO=withdrawn
# revert POOL DESC COMMAND...: runs the revert, checks its warning and what
# it leaves: no record, the audit record of who withdrew what.
revert() {
  local p=$1 desc=$2 by=$3 out
  shift 3
  out=$("$@")
  check_contains "$p: $desc withdraws the request (kubectl prints the warning)" \
    "request for release 4.17.1 withdrawn: the write sets the running 4.17.0" "$(warnings "$out")"
  check_eq "$p: ... the record goes, the release stays 4.17.0" " $REL0" "$(recorded_release $p) $(np_get $p .spec.release.image)"
  check_eq "$p: ... who withdrew what" "$by release 4.17.1" "$(ann_of $p withdrawn-by) $(ann_of $p withdrawn)"
}
# Server-side dry-run of the tool's revert (what Flux's drift detection and
# Argo CD's Server-Side Diff run first): the answer predicts the
# withdrawal, and nothing is stored.
dry=$(manifest ssa "$REL0" | kc_as "$FLUX" apply --server-side --force-conflicts --field-manager kustomize-controller \
  --dry-run=server -o json -f - | sed -n '/^{/,$p')
check_eq "ssa: a server-side dry-run of the revert predicts the withdrawal; nothing is stored" \
  "none $FLUX | $REL1" \
  "$(jq -r --arg k "$REQ" --arg w "$CM/withdrawn-by" '"\(.metadata.annotations[$k] // "none") \(.metadata.annotations[$w])"' <<<"$dry") | $(recorded_release ssa)"
csa_apply() { manifest csa "$REL0" | kc apply -f -; }
revert csa "kubectl apply (client-side) of the old manifest" hcp-e2e-admin csa_apply
revert ssa "the GitOps tool's server-side apply of the old manifest" "$FLUX" flux_apply ssa "$REL0"
kub_apply() { jq -nc --arg ns "$NS" --arg i "$REL0" '{apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
  metadata: {name: "kub", namespace: $ns}, spec: {release: {image: $i}}}' | kc apply --server-side -f -; }
revert kub "kubectl apply --server-side (a second field manager beside the tool's)" hcp-e2e-admin kub_apply
check_eq "kub: both field managers apply spec.release.image" "kubectl kustomize-controller" \
  "$(np_get kub '[.metadata.managedFields[] | select(.operation == "Apply" and .fieldsV1["f:spec"]["f:release"]["f:image"] != null) | .manager] | sort | join(" ")')"
out=$(manifest mix "$REL0" c2 | kc apply -f -)
check_contains "mix: one apply reverts the release: withdrawn" \
  "request for release 4.17.1 withdrawn: the write sets the running 4.17.0" "$(warnings "$out")"
check_contains "mix: ... and asks for another config: held" "spec.config: held until changes are permitted" \
  "$(warnings "$out")"
check_eq "mix: the record holds the config alone; config and release stay" \
  '{"config":[{"name":"c2"}]} c1 '"$REL0" "$(record mix) $(np_get mix '.spec.config[0].name') $(np_get mix .spec.release.image)"
out=$(kc annotate nodepool -n "$NS" ann "$REQ-")
check_contains "ann: kubectl annotate of the record withdraws the request" \
  "request for release 4.17.1 withdrawn: the write removes its record" "$(warnings "$out")"
check_eq "ann: who withdrew what" "hcp-e2e-admin release 4.17.1" "$(ann_of ann withdrawn-by) $(ann_of ann withdrawn)"
still_before a "$OPEN" "the withdrawals"

# ---- writes that only carry the release along: never a withdrawal ----------------

SCENARIO=carried
calls0=$(admission_calls)
STILL="request for release 4.17.1 is still held until $OPEN (this write withdraws nothing); to withdraw it: kubectl annotate -n $NS nodepool carry $REQ-"
out=$(kc get nodepool -n "$NS" carry -o json | kc_as "$HYPERSHIFT" replace -f -)
check_eq "carry: HyperShift's full update (its ServiceAccount) is not warned" "" "$(warnings "$out")"
warned=0 writes=0
# carried DESC OUTPUT: the write is warned the request is still held.
carried() {
  writes=$((writes + 1))
  if [ "$(warnings "$2")" = "$STILL" ]; then warned=$((warned + 1)); ok "carry: $1 is told the request is still held"; else
    not_ok "carry: $1 is told the request is still held" "warnings: '$(warnings "$2")'"; fi
}
carried "kubectl label" "$(kc label nodepool -n "$NS" carry team=a)"
carried "kubectl annotate of something else" "$(kc annotate nodepool -n "$NS" carry note=x)"
carried "another controller's full update" "$(kc get nodepool -n "$NS" carry -o json | kc_as "$OTHER" replace -f -)"
for i in 1 2 3; do
  carried "a merge patch of the running value ($i)" \
    "$(kc_as ocm patch nodepool -n "$NS" carry --type merge -p "{\"spec\": {\"release\": {\"image\": \"$REL0\"}}}")"
  carried "a JSON patch of the running value ($i)" \
    "$(kc_as ocm patch nodepool -n "$NS" carry --type json -p "[{\"op\": \"replace\", \"path\": \"/spec/release/image\", \"value\": \"$REL0\"}]")"
done
echo "# figure: merge and JSON patches of the running value warned: $warned of $writes warnable writes"
out=$(flux_apply carry "$REL1")
check_contains "carry: the GitOps tool's re-apply of the requested value is held again" \
  "spec.release: held until changes are permitted" "$(warnings "$out")"
check_eq "carry: after all of them the request is as it was (4.17.1, asked by ocm), never withdrawn" \
  "$REL0 $REL1 ocm " "$(np_get carry .spec.release.image) $(recorded_release carry) $(ann_of carry requested-by) $(ann_of carry withdrawn-by)"
echo "# figure: carry-along writes that withdrew: 0 of $((writes + 2)) (HyperShift's update, the tool's re-apply and $writes others)"
echo "# figure: admission calls for those $((writes + 2)) writes: $(($(admission_calls) - calls0))"
still_before a "$OPEN" "the carry-along writes"

# ---- what the controller says about a withdrawal ---------------------------------

SCENARIO=told
for p in $WITHDRAWN_POOLS; do
  eventually "$p: one ChangeWithdrawn Event" 1 count_events "$NS" $p ChangeWithdrawn
done
check_eq "carry: no ChangeWithdrawn Event" 0 "$(count_events "$NS" carry ChangeWithdrawn)"
check_contains "csa: the Event says who withdrew what" "The request for release 4.17.1 was withdrawn by hcp-e2e-admin at" \
  "$(api GET "/api/v1/namespaces/$NS/events" | jq -r '.items[] | select(.involvedObject.name == "csa" and .reason == "ChangeWithdrawn") | .message')"
withdrawn_told() { cat "$RECV"/*.json 2>/dev/null | jq -r 'select(.data.step == "withdrawn") | .data.name' | sort | tr '\n' ' '; }
eventually "a withdrawn notification for each withdrawal, none for carry" "ann csa kub mix ssa " withdrawn_told
doc=$(cat "$RECV"/*.json | jq -c 'select(.data.step == "withdrawn" and .data.name == "ssa")')
check_eq "ssa: the notification's type, what and who" \
  "io.openshift.hypershift.changemanagement.withdrawn.v1|release 4.17.1|Withdrawn by $FLUX" \
  "$(jq -r '"\(.type)|\(.data.change)|\(.data.detail | sub(" at .*"; ""))"' <<<"$doc")"
check_eq "csa: the companion has nothing held and shows the withdrawal" "null hcp-e2e-admin release 4.17.1" \
  "$(np_cm "$NS" csa '"\(.heldChange) \(.audit.withdrawn.by) \(.audit.withdrawn.what)"')"
check_contains "csa: ChangesPending says nothing is pending, and why" \
  "No changes are pending: the request for release 4.17.1 was withdrawn by hcp-e2e-admin at" \
  "$(cond "$(np_path "$NS" csa)" ChangesPending message)"
check_eq "csa: ChangesPending is False" False "$(cond "$(np_path "$NS" csa)" ChangesPending status)"
out=$("$HCP_BIN" explain nodepool "$NS/csa" --kubeconfig "$KCFG" 2>&1)
check_contains "explain prints the withdrawal" "Withdrawn:  release 4.17.1, by hcp-e2e-admin at" "$out"
still_before a "$OPEN" "what the controller said"

# ---- the window opens: nothing of a withdrawn request starts ----------------------

SCENARIO=window
rolled() { [ "$(machinesets_of "$1")" != "${MS0[$1]}" ]; }
both_rolled() { rolled mix && rolled carry; }
sleep_until_sim a "$OPEN"
check "the window opens: mix's config and carry's release roll (a new MachineSet each)" wait_for 60 both_rolled
check_eq "mix: its config was applied, its release stays" "c2 $REL0" "$(np_get mix '.spec.config[0].name') $(np_get mix .spec.release.image)"
check_eq "carry: its release was applied" "$REL1" "$(np_get carry .spec.release.image)"
sleep 10 # a withdrawn request let through would have started by now
started=0
for p in csa ssa kub ann; do
  s=$(np_get $p .spec.release.image)
  if [ "$s" != "$REL0" ] || [ "$(machinesets_of $p)" != "${MS0[$p]}" ] || [ "$(machines_of $p)" != "${M0[$p]}" ]; then started=$((started + 1)); fi
  check_eq "$p: no new MachineSet or Machine, spec.release and status.version stay 4.17.0" \
    "${MS0[$p]} | ${M0[$p]} | $REL0 4.17.0" "$(machinesets_of $p) | $(machines_of $p) | $s $(np_get $p .status.version)"
done
[ "$(np_get mix .spec.release.image)" = "$REL0" ] || started=$((started + 1))
echo "# figure: reverted requests that still started at the window: $started of 5 (client-side apply, server-side apply by the tool, by kubectl beside it, the release of a write that also asked for a config, the annotation removed)"
check_eq "reverted requests that started at the window" 0 "$started"
initiated_told() { cat "$RECV"/*.json 2>/dev/null | jq -r 'select(.data.step == "initiated") | .data.name' | sort | tr '\n' ' '; }
EVENTUALLY=10 eventually "initiated told for carry and mix alone" "carry mix " initiated_told
initiated_all() { for p in csa ssa kub ann carry mix; do printf '%s ' "$(initiated $p)"; done | sed 's/ $//'; }
EVENTUALLY=10 eventually "ChangesInitiated Events: none for the withdrawn, one each for carry and mix" "0 0 0 0 1 1" \
  initiated_all
carry_done() { [ "$(np_get carry .status.version)" = 4.17.1 ]; }
check "carry's rollout completes: HyperShift reports 4.17.1" wait_for 90 carry_done

stop_ctl a
model_stop
summary
