#!/usr/bin/env bash
# End-to-end: every replica down. The API server calls the chart's webhook
# configurations (mutating and validating, as `helm template` renders them
# with the default values: failurePolicy Fail, the objectSelector on the
# opted-in label, the matchConditions) at an address where nothing listens,
# so every call it makes fails and is refused. What is refused is therefore
# exactly what the configurations send:
#
#   - writes to objects that never opted in (no stanza, no label): none;
#   - HyperShift's own writes to opted-in objects (finalizers, its
#     annotations, status, a MachineDeployment's replicas): none;
#   - deletions, and the finalizer removals that end them: none;
#   - opted-in writes that a replica would hold or validate (a release, a
#     template, a target, our pause deleted, a stanza, a policy's spec):
#     refused, each with the API server's "failed calling webhook" naming
#     the webhook; the object is left as it was (docs/user-guide.md, "When
#     no replica answers").
#
# No controller runs: the opted-in label and our pause, which the leader
# writes, are set here the way it writes them (pkg/controller/reconcile.c).
# A control run with the matchConditions removed shows that they are what
# keeps HyperShift's writes from being refused.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh (the webhook scenario helpers; no model runs)
. "$here/../model/lib.sh"

WH_NAME=hcp-e2e-outage-$$
LABEL=$CM/opted-in
HSFIN=hypershift.openshift.io/finalizer
TARGET=hypershift.openshift.io/nodePoolTargetConfigVersion

webhook_scenario_begin

NS=$(new_ns outage)
DEAD=$(free_port) # nothing listens there: every replica is down

# ---- the objects, before the webhook configurations ---------------------------------

mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "setup: policy"
mk_hc "$NS" free || not_ok "setup: HostedCluster free (no stanza)"
mk_hc "$NS" opted policy=weekend || not_ok "setup: HostedCluster opted (a stanza)"
mk_np "$NS" npfree free || not_ok "setup: NodePool npfree"
mk_np "$NS" npopted opted policy=weekend || not_ok "setup: NodePool npopted"
api POST "$CAPI/namespaces/$NS-opted/machinesets" "$(jq -nc --arg t "$TARGET" '{
  apiVersion: "cluster.x-k8s.io/v1beta1", kind: "MachineSet",
  metadata: {name: "npinplace", annotations: {"hypershift.openshift.io/nodePool": "x/npinplace", ($t): "c1"}},
  spec: {clusterName: "opted-infra", replicas: 2, selector: {matchLabels: {"opted-npinplace": "opted-npinplace"}},
    template: {metadata: {labels: {"opted-npinplace": "opted-npinplace"}},
      spec: {clusterName: "opted-infra", version: "4.17.0", bootstrap: {dataSecretName: "user-data-npinplace"},
        infrastructureRef: {apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
                            kind: "AWSMachineTemplate", name: "npinplace"}}}}}')" \
  application/json >/dev/null || not_ok "setup: MachineSet npinplace"
MS=$CAPI/namespaces/$NS-opted/machinesets/npinplace
# The leader's writes: the opted-in label on the HostedCluster with a stanza
# and on its pools and their CAPI objects, and its pause on the MachineDeployment.
for p in "$(hc_path "$NS" opted)" "$(np_path "$NS" npopted)" "$(md_path "$NS" opted npopted)" "$MS"; do
  api PATCH "$p" "{\"metadata\":{\"labels\":{\"$LABEL\":\"true\"}}}" >/dev/null || not_ok "setup: label $p"
done
api PATCH "$(md_path "$NS" opted npopted)" \
  "{\"metadata\":{\"annotations\":{\"$PAUSED_ANN\":\"true\",\"$MARKER_ANN\":\"hcp-controller\"}},\"spec\":{\"template\":{\"spec\":{\"version\":\"4.17.0\"}}}}" >/dev/null ||
  not_ok "setup: our pause, and the pool's template"

# ---- the chart's configurations, pointed at nothing -----------------------------------

for kind in MutatingWebhookConfiguration ValidatingWebhookConfiguration; do
  WH_KIND=$kind chart_webhook_config "$DEAD" "$NS" "$NS-free" "$NS-opted" >"$CTL_TMP/$kind.json" ||
    not_ok "the chart's $kind"
done
check_eq "every webhook of the chart has matchConditions" "8 8" \
  "$(cat "$CTL_TMP"/*WebhookConfiguration.json | jq -s '[.[].webhooks[]] | "\(length) \(map(select(.matchConditions | length > 0)) | length)"' -r)"
check_eq "the holds select the opted-in label (the ConfigMap hold too); the validations select no label" "true true true true true|none none none" \
  "$(jq -r --arg l "$LABEL" '[.webhooks[] | .objectSelector.matchLabels[$l] // "none"] | join(" ")' "$CTL_TMP/MutatingWebhookConfiguration.json")|$(jq -r '[.webhooks[] | .objectSelector // {} | if . == {} then "none" else "some" end] | join(" ")' "$CTL_TMP/ValidatingWebhookConfiguration.json")"
for kind in MutatingWebhookConfiguration ValidatingWebhookConfiguration; do
  out=$(k apply -f "$CTL_TMP/$kind.json" 2>&1)
  check "the API server accepts the chart's $kind (its CEL compiles)" test $? -eq 0 ||
    echo "# $out"
done
sleep 2 # the API server's webhook configuration informer

# ---- the writes -------------------------------------------------------------------------

declare -A REFUSED=() SENT=()
# try CATEGORY KIND WHAT METHOD PATH [BODY [CONTENT-TYPE]]: one write; a
# refusal by an unanswered webhook is counted under CATEGORY and KIND. Sets
# CODE and BODY.
try() {
  local cat=$1 kind=$2 what=$3
  shift 3
  local args=(-s -o "$CTL_TMP/try.body" -w '%{http_code}' --max-time 20 --cacert "$E_CA" -X "$1"
    -H "Authorization: Bearer $ADMIN_TOKEN")
  [ $# -ge 3 ] && args+=(-H "Content-Type: ${4:-application/merge-patch+json}" --data-binary "$3")
  CODE=$(curl "${args[@]}" "$E_SERVER$2")
  BODY=$(cat "$CTL_TMP/try.body")
  SENT[$cat]=$((${SENT[$cat]:-0} + 1))
  if [ "$CODE" -ge 400 ] && grep -q 'failed calling webhook' <<<"$BODY"; then
    REFUSED["$cat $kind"]=$((${REFUSED["$cat $kind"]:-0} + 1))
    echo "# refused ($cat): $kind $what: $(jq -r .message <<<"$BODY" | cut -c1-160)"
  elif [ "$CODE" -ge 400 ]; then
    not_ok "$kind $what: an answer of the API server itself" "HTTP $CODE: $(jq -r .message <<<"$BODY" 2>/dev/null | cut -c1-200)"
  fi
}
refused_in() { # CATEGORY: refusals in it, all kinds
  local n=0 key
  for key in "${!REFUSED[@]}"; do [ "${key%% *}" = "$1" ] && n=$((n + REFUSED[$key])); done
  echo "$n"
}
by_kind() { # CATEGORY: "Kind=N ..." of its refusals
  local key out=""
  for key in "${!REFUSED[@]}"; do [ "${key%% *}" = "$1" ] && out+="${key#* }=${REFUSED[$key]} "; done
  tr ' ' '\n' <<<"$out" | sort | tr '\n' ' ' | sed 's/^ *//; s/ *$//'
}
mp() { jq -nc "$1"; } # a merge patch from a jq expression

echo "# ---- objects that never opted in"
try free HostedCluster "release" PATCH "$(hc_path "$NS" free)" "$(mp "{spec: {release: {image: \"$REL1\"}}}")"
try free HostedCluster "an annotation" PATCH "$(hc_path "$NS" free)" '{"metadata":{"annotations":{"example.com/a":"1"}}}'
try free HostedCluster "create, no stanza" POST "$HS/namespaces/$NS/hostedclusters" \
  "$(jq -nc '{apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedCluster", metadata: {name: "new"},
    spec: {release: {image: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"}, infraID: "new-infra", platform: {type: "None"}}}')" \
  application/json
try free NodePool "replicas and release" PATCH "$(np_path "$NS" npfree)" "$(mp "{spec: {replicas: 3, release: {image: \"$REL1\"}}}")"
try free MachineDeployment "template and replicas" PATCH "$(md_path "$NS" free npfree)" \
  '{"spec":{"replicas":3,"template":{"spec":{"version":"4.17.1"}}}}'
check_eq "the release of a HostedCluster that never opted in is written" "$REL1" "$(get "$(hc_path "$NS" free)" .spec.release.image)"

echo "# ---- HyperShift's own writes to opted-in objects"
# hostedcluster_controller.go (Reconcile): the finalizer, then status; its
# annotations (e.g. the control plane operator image it resolved).
try hypershift HostedCluster "finalizer added" PATCH "$(hc_path "$NS" opted)" "{\"metadata\":{\"finalizers\":[\"$HSFIN\"]}}"
try hypershift HostedCluster "its annotation" PATCH "$(hc_path "$NS" opted)" '{"metadata":{"annotations":{"hypershift.openshift.io/control-plane-operator-image":"cpo:1"}}}'
try hypershift HostedCluster "status" PATCH "$(hc_path "$NS" opted)/status" '{"status":{"conditions":[{"type":"Available","status":"True","reason":"AsExpected","message":"","lastTransitionTime":"2026-03-06T00:00:00Z"}]}}'
# nodepool_controller.go: the finalizer and status of the NodePool.
try hypershift NodePool "finalizer added" PATCH "$(np_path "$NS" npopted)" "{\"metadata\":{\"finalizers\":[\"$HSFIN\"]}}"
try hypershift NodePool "status" PATCH "$(np_path "$NS" npopted)/status" '{"status":{"replicas":2}}'
# nodepool/capi.go (reconcileMachineDeployment): replicas, labels and
# annotations of its own, with the template unchanged.
try hypershift MachineDeployment "replicas and its annotation" PATCH "$(md_path "$NS" opted npopted)" \
  '{"spec":{"replicas":4},"metadata":{"annotations":{"hypershift.openshift.io/nodePoolPlatformMachineTemplate":"t-1"}}}'
try hypershift MachineDeployment "status" PATCH "$(md_status_path "$NS" opted npopted)" "$(md_rollout_status 4 4)"
try hypershift MachineSet "replicas" PATCH "$MS" '{"spec":{"replicas":3}}'
try hypershift HostedChangeManagementPolicy "a label (no spec change)" PATCH "$(hcmp_path "$NS" weekend)" '{"metadata":{"labels":{"team":"a"}}}'
check_eq "our pause is still on the MachineDeployment" paused+marker "$(pause_state "$(md_path "$NS" opted npopted)")"

echo "# ---- opted-in writes a replica would hold or validate"
try opted HostedCluster "release" PATCH "$(hc_path "$NS" opted)" "$(mp "{spec: {release: {image: \"$REL1\"}}}")"
try opted HostedCluster "stanza changed" PATCH "$(hc_path "$NS" opted)" "{\"metadata\":{\"annotations\":{\"$CM/strategy\":\"Restrictive\"}}}"
try opted HostedCluster "first stanza (opting in)" PATCH "$(hc_path "$NS" free)" "{\"metadata\":{\"annotations\":{\"$CM/policy\":\"weekend\"}}}"
try opted HostedCluster "create with a stanza" POST "$HS/namespaces/$NS/hostedclusters" \
  "$(jq -nc --arg k "$CM/policy" '{apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedCluster",
    metadata: {name: "new2", annotations: {($k): "weekend"}},
    spec: {release: {image: "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"}, infraID: "new2-infra", platform: {type: "None"}}}')" \
  application/json
try opted NodePool "release" PATCH "$(np_path "$NS" npopted)" "$(mp "{spec: {release: {image: \"$REL1\"}}}")"
try opted NodePool "stanza changed" PATCH "$(np_path "$NS" npopted)" "{\"metadata\":{\"annotations\":{\"$CM/strategy\":\"Permissive\"}}}"
try opted MachineDeployment "template (HyperShift's rollout write)" PATCH "$(md_path "$NS" opted npopted)" '{"spec":{"template":{"spec":{"version":"4.17.1"}}}}'
try opted MachineDeployment "our pause deleted (HyperShift's reconcile)" PATCH "$(md_path "$NS" opted npopted)" \
  "{\"metadata\":{\"annotations\":{\"$PAUSED_ANN\":null}}}"
try opted MachineSet "target configuration" PATCH "$MS" "{\"metadata\":{\"annotations\":{\"$TARGET\":\"c2\"}}}"
try opted HostedChangeManagementPolicy "spec" PATCH "$(hcmp_path "$NS" weekend)" '{"spec":{"strategy":"Permissive"}}'
try opted HostedChangeManagementPolicy "create" POST "$HCMP_API/namespaces/$NS/hostedchangemanagementpolicies" \
  "$(jq -nc --argjson s "$(weekly_policy Sunday 01:00 4h)" '{apiVersion: "changemanagement.hypershift.openshift.io/v1alpha1",
    kind: "HostedChangeManagementPolicy", metadata: {name: "sunday"}, spec: $s}')" application/json
check_eq "the opted-in HostedCluster's release is as it was" "$REL0" "$(get "$(hc_path "$NS" opted)" .spec.release.image)"
check_eq "the opted-in NodePool's release is as it was" "$REL0" "$(get "$(np_path "$NS" npopted)" .spec.release.image)"
check_eq "the MachineDeployment's template is as it was" 4.17.0 "$(md_version "$(md_path "$NS" opted npopted)")"
check_eq "the MachineSet's target is as it was" c1 "$(get "$MS" ".metadata.annotations[\"$TARGET\"]")"
check_eq "the policy's spec is as it was" MaintenanceSchedule "$(get "$(hcmp_path "$NS" weekend)" .spec.strategy)"
check_contains "a refusal names the webhook that did not answer" \
  'failed calling webhook "validate-hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io"' \
  "$(jq -r .message <<<"$BODY")"

# The control: the same configurations without their matchConditions send
# HyperShift's finalizer write to the hold, which refuses it.
jq -c 'del(.webhooks[].matchConditions)' "$CTL_TMP/MutatingWebhookConfiguration.json" | k apply -f - >/dev/null ||
  not_ok "control: the configuration without matchConditions"
sleep 2
try control HostedCluster "finalizer removed, without matchConditions" PATCH "$(hc_path "$NS" opted)" '{"metadata":{"finalizers":null}}'
check_eq "control: without the matchConditions HyperShift's finalizer write is refused" 1 "$(refused_in control)"
k apply -f "$CTL_TMP/MutatingWebhookConfiguration.json" >/dev/null || not_ok "the chart's configuration again"
sleep 2

echo "# ---- deletions"
# A deletion with a finalizer: the API server sets deletionTimestamp, then
# HyperShift removes its finalizer (an UPDATE) and the object goes.
try delete HostedCluster "delete (finalizer pending)" DELETE "$(hc_path "$NS" opted)"
try delete HostedCluster "finalizer removed" PATCH "$(hc_path "$NS" opted)" '{"metadata":{"finalizers":null}}'
try delete NodePool "delete (finalizer pending)" DELETE "$(np_path "$NS" npopted)"
try delete NodePool "finalizer removed" PATCH "$(np_path "$NS" npopted)" '{"metadata":{"finalizers":null}}'
try delete MachineDeployment delete DELETE "$(md_path "$NS" opted npopted)"
try delete MachineSet delete DELETE "$MS"
try delete HostedChangeManagementPolicy delete DELETE "$(hcmp_path "$NS" weekend)"
try delete HostedCluster "delete (never opted in)" DELETE "$(hc_path "$NS" free)"
deleted() { ! api GET "$1" >/dev/null 2>&1; }
check "the opted-in HostedCluster is gone" wait_for 10 deleted "$(hc_path "$NS" opted)"
check "the opted-in NodePool is gone" wait_for 10 deleted "$(np_path "$NS" npopted)"

# ---- the figures --------------------------------------------------------------------------

echo "# figure: every replica down, failurePolicy Fail, the chart's configurations:"
for c in free hypershift delete opted; do
  echo "#   $c: ${SENT[$c]:-0} writes, $(refused_in "$c") refused ($(by_kind "$c"))"
done
check_eq "writes to objects that never opted in: none refused" 0 "$(refused_in free)"
check_eq "HyperShift's writes to opted-in objects: none refused" 0 "$(refused_in hypershift)"
check_eq "deletions and their finalizer removals: none refused" 0 "$(refused_in delete)"
check_eq "opted-in writes a replica would hold or validate: all refused, by kind" \
  "HostedChangeManagementPolicy=2 HostedCluster=4 MachineDeployment=2 MachineSet=1 NodePool=2" "$(by_kind opted)"
summary
