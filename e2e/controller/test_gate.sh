#!/usr/bin/env bash
# The health gate (DESIGN.md 3.10) beside the HyperShift / Cluster API
# behaviour model, with the admission webhooks holding the release.
#
# A release requested on Friday evening is held for the Saturday window. The
# HostedCluster turns Degraded just before the window opens: at the opening
# the release is not let through (the model records no control-plane
# initiation; spec.release.image stays), and the conditions, the companion,
# an Event and the metric say why. Inside the window HyperShift reports it
# healthy again: the release goes through within 2 s (real) of that status
# write, and the latency is printed. 2026-03-07 is a Saturday.
#
# The held release must also still be recommended for the cluster when its
# window opens (seed 004: the available updates rechecked at the time of
# the upgrade): a release pulled from the update graph between its hold and
# its window (HyperShift's copy of the hosted ClusterVersion's
# availableUpdates lists another) is not let through, and everything that
# tells says why; listed again inside the window, it goes through.
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller
# and the model. CTL_E2E_ONLY="fn ..." runs only the named scenarios.
# Prints "N passed, N failed".
#
# `make e2e-capi` runs it on the "capi" instance too (CTL_E2E_INSTANCE=capi),
# where Cluster API's own controllers act on the machines the model records.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

WH_NAME=hcp-e2e-gate-$$
GATE_LATENCY=2 # real seconds from "healthy" to the release let through

gate_holds() { metric a 'change_management_health_gate_holds_total\{kind="HostedCluster",system="control-plane"\}'; }

# set_hc_health NS NAME AVAILABLE DEGRADED: HyperShift's Available and
# Degraded conditions on a HostedCluster (api/hypershift/v1beta1/
# hostedcluster_conditions.go), every other condition kept; conditional on
# the resourceVersion read, again on a conflict (the controller and the
# model write the same status).
set_hc_health() {
  local p="$HS/namespaces/$1/hostedclusters/$2" obj body i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    obj=$(api GET "$p") || return 1
    body=$(jq -c --arg a "$3" --arg d "$4" '{metadata: {resourceVersion: .metadata.resourceVersion},
      status: {conditions: ([.status.conditions // [] | .[] |
        select(.type != "Available" and .type != "Degraded")] + [
        {type: "Available", status: $a, message: "",
         reason: (if $a == "True" then "AsExpected" else "KASLoadBalancerNotReachable" end),
         lastTransitionTime: "2026-01-01T00:00:00Z"},
        {type: "Degraded", status: $d, message: "",
         reason: (if $d == "True" then "UnavailableReplicas" else "AsExpected" end),
         lastTransitionTime: "2026-01-01T00:00:00Z"}])}}' <<<"$obj")
    api PATCH "$p/status" "$body" >/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# set_hc_updates NS NAME JSON: HyperShift's copy of the hosted
# ClusterVersion's availableUpdates (control-plane-operator/
# hostedclusterconfigoperator/controllers/hcpstatus/hcpstatus.go, into
# status.version), the rest of status.version kept; conditional on the
# resourceVersion read, again on a conflict.
set_hc_updates() {
  local p="$HS/namespaces/$1/hostedclusters/$2" obj body i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    obj=$(api GET "$p") || return 1
    body=$(jq -c --argjson u "$3" '{metadata: {resourceVersion: .metadata.resourceVersion},
      status: {version: (.status.version + {availableUpdates: $u})}}' <<<"$obj")
    api PATCH "$p/status" "$body" >/dev/null && return 0
    sleep 0.05
  done
  return 1
}
rec_holds() { metric a change_management_release_not_recommended_total; }

pulled_release_held_at_window() {
  local ns t0 ms b told dir port doc
  ns=$(new_ns rec) || return
  # Notifications to a receiver (the release-withdrawn step).
  dir=$CTL_TMP/recv-rec${CTL_RERUN:+-r$CTL_RERUN}
  mkdir -p "$dir"
  port=$(free_port)
  cat >"$CTL_TMP/guard-rec.yaml" <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: hcp-controller-guard}
data:
  notifications: |
    {"endpoints": [{"name": "recv", "url": "http://127.0.0.1:$port/hook"}]}
YAML
  recv_start "$dir" "$port"
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-rec.yaml")
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 10m)" || return
  must mk_hc "$ns" hc2 policy=weekly || return
  must set_hc_health "$ns" hc2 True False || return
  model_scenario "$ns" 2026-03-06T23:57:00Z 30 hc2 --hc-status || return
  eventually "HyperShift (model) reports the running release in status.version" "$REL0" \
    get "$(hc_path "$ns" hc2)" '.status.version.desired.image // ""'
  release_held "a release on Friday evening" "$(hc_path "$ns" hc2)" "$REL1" "$REL0"
  # Pulled from the graph before the window: the update service offers
  # 4.17.2, not 4.17.1.
  must set_hc_updates "$ns" hc2 '[{"version": "4.17.2", "image": "quay.io/openshift-release-dev/ocp-release@sha256:2222"}]' || return
  still_before a 2026-03-07T00:00:00Z "the release held, then pulled"

  sleep_until_sim a 2026-03-07T00:00:00Z 1
  b=$(ctl_real_at a 2026-03-07T00:00:00Z)
  now_is "at the window's opening the pulled release is not let through (model record)" 0 \
    model_count controlplane-initiation "$ns/hc2"
  now_is "spec.release.image stays" "$REL0" get "$(hc_path "$ns" hc2)" .spec.release.image
  eventually "ChangesPending=True (ReleaseNotRecommended)" True/ReleaseNotRecommended \
    hc_cond_sr "$ns" hc2 ChangesPending
  # The controller's own log line of the Event: when it decided and told.
  told=$(grep -m1 "ReleaseNotRecommended kind=HostedCluster namespace=$ns name=hc2" "${CTL_LOG[a]}" | awk '{ print $1 }')
  told=$(awk -v t="$(secs "${told:-1970-01-01T00:00:00Z}")" -v b="$b" 'BEGIN { printf "%.3f", t - b }')
  echo "# figure: window open -> ReleaseNotRecommended told (the controller's Event): $told s (load average $(cut -d' ' -f1 /proc/loadavg))"
  in_range "told within $(real_s 1) s of the window's opening, not before" "$told" 0 "$(real_s 1)"
  check_contains "the condition says why" \
    "release 4.17.1 is no longer offered for this cluster: neither status.version.availableUpdates nor conditionalUpdates lists it" \
    "$(cond "$(hc_path "$ns" hc2)" ChangesPaused message)"
  now_is "the companion's current state" ChangesPaused/ReleaseNotRecommended \
    hc_cm "$ns" hc2 '.behavior.current | "\(.state)/\(.reason)"'
  eventually "a ReleaseNotRecommended Event" 1 count_events "$ns" hc2 ReleaseNotRecommended
  eventually "change_management_release_not_recommended_total" 1 rec_holds
  EVENTUALLY=10 eventually "a release-withdrawn notification" 1 step_count "$dir" release-withdrawn
  doc=$(step_doc "$dir" release-withdrawn)
  check_eq "release-withdrawn: type and subject" \
    "io.openshift.hypershift.changemanagement.release-withdrawn.v1 hostedclusters/$ns/hc2" \
    "$(jq -r '"\(.type) \(.subject)"' <<<"$doc")"
  check_contains "release-withdrawn: names the release and why" "release 4.17.1 is no longer offered" \
    "$(jq -r '.data.detail // ""' <<<"$doc")"
  "$HCP_BIN" explain --kubeconfig "$KCFG" hostedcluster "$ns/hc2" >"$CTL_TMP/explain" 2>&1
  check_contains "explain says so" "Health:     fails (release 4.17.1 is no longer offered" \
    "$(cat "$CTL_TMP/explain")"
  sleep 1
  now_is "still nothing started (model record)" 0 model_count controlplane-initiation "$ns/hc2"

  # Offered again inside the window: let through on the status event.
  t0=$(now_us)
  must set_hc_updates "$ns" hc2 '[{"version": "4.17.1", "image": "quay.io/openshift-release-dev/ocp-release@sha256:1111"}, {"version": "4.17.2", "image": "quay.io/openshift-release-dev/ocp-release@sha256:2222"}]' || return
  while [ "$(model_count controlplane-initiation "$ns/hc2")" -lt 1 ] &&
    [ $(($(now_us) - t0)) -lt $((GATE_LATENCY * 3 * 1000000)) ]; do
    sleep 0.02
  done
  ms=$((($(now_us) - t0) / 1000))
  echo "# figure: release listed again to control-plane initiation seen in the model's record: $ms ms (an upper bound)"
  in_range "listed again inside the window, the release is let through within $(real_s "$GATE_LATENCY") s" \
    "$ms" 0 "$(real_s "$((GATE_LATENCY * 1000))")"
  still_before a 2026-03-07T00:10:00Z "the release let through inside the window"
  now_is "the held release is applied" "$REL1" get "$(hc_path "$ns" hc2)" .spec.release.image
  now_is "one ReleaseNotRecommended Event in all" 1 count_events "$ns" hc2 ReleaseNotRecommended
  now_is "one release-withdrawn notification in all" 1 step_count "$dir" release-withdrawn
  recv_stop
}

unhealthy_cluster_skips_window() {
  local ns t0 t1 ms by
  ns=$(new_ns gate) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 10m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must set_hc_health "$ns" hc1 True False || return
  model_scenario "$ns" 2026-03-06T23:57:00Z 30 hc1 --hc-status || return
  EVENTUALLY=5 eventually "ChangesPaused=True (OutsideMaintenanceWindow) on Friday" \
    True/OutsideMaintenanceWindow hc_cond_sr "$ns" hc1 ChangesPaused
  release_held "a release on Friday evening" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  # DESIGN.md 3.11: who asked, in the write the webhook admitted.
  by=$(get "$(hc_path "$ns" hc1)" ".metadata.annotations[\"$CM/requested-by\"] // \"\"")
  check "the held request records who made it (userInfo.username)" \
    test -n "$by" -a "$by" != unknown
  eventually "the companion's audit names the requester" "$by" hc_cm "$ns" hc1 .audit.heldRequest.by
  eventually "a ChangeHeld Event" 1 count_events "$ns" hc1 ChangeHeld
  must set_hc_health "$ns" hc1 True True || return
  still_before a 2026-03-07T00:00:00Z "the release held and the cluster Degraded"

  sleep_until_sim a 2026-03-07T00:00:00Z 1
  now_is "at the window's opening the release is not let through (model record)" 0 \
    model_count controlplane-initiation "$ns/hc1"
  now_is "spec.release.image stays" "$REL0" get "$(hc_path "$ns" hc1)" .spec.release.image
  eventually "ChangesPaused=True (HealthGate)" True/HealthGate hc_cond_sr "$ns" hc1 ChangesPaused
  now_is "ChangesPending=True (HealthGate)" True/HealthGate hc_cond_sr "$ns" hc1 ChangesPending
  check_contains "the condition says what failed" "Degraded is True (reason UnavailableReplicas)" \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  eventually "the companion's healthGate" false/Degraded\ is\ True\ \(reason\ UnavailableReplicas\) \
    hc_cm "$ns" hc1 '"\(.healthGate.passed)/\(.healthGate.message)"'
  now_is "the companion's current state" ChangesPaused/HealthGate \
    hc_cm "$ns" hc1 '.behavior.current | "\(.state)/\(.reason)"'
  now_is "the held change stays in the companion" "$REL1" hc_cm "$ns" hc1 .heldChange.release
  eventually "a HealthGate Event" 1 count_events "$ns" hc1 HealthGate
  now_is "no WindowOpened Event" 0 count_events "$ns" hc1 WindowOpened
  eventually "change_management_health_gate_holds_total" 1 gate_holds
  "$HCP_BIN" explain --kubeconfig "$KCFG" hostedcluster "$ns/hc1" >"$CTL_TMP/explain" 2>&1
  check_contains "explain shows the gate's verdict" \
    "Health:     fails (Degraded is True (reason UnavailableReplicas))" "$(cat "$CTL_TMP/explain")"
  now_is "explain -o json: healthGate.passed" false \
    bash -c '"$0" explain --kubeconfig "$1" hostedcluster "$2" -o json | jq -r .healthGate.passed' \
    "$HCP_BIN" "$KCFG" "$ns/hc1"
  sleep 1
  now_is "still nothing started (model record)" 0 model_count controlplane-initiation "$ns/hc1"

  # Healthy again inside the window: let through on the status event.
  t0=$(now_us)
  must set_hc_health "$ns" hc1 True False || return
  while [ "$(model_count controlplane-initiation "$ns/hc1")" -lt 1 ] &&
    [ $(($(now_us) - t0)) -lt $((GATE_LATENCY * 3 * 1000000)) ]; do
    sleep 0.02
  done
  t1=$(now_us)
  ms=$(((t1 - t0) / 1000))
  echo "# figure: healthy status write to control-plane initiation seen in the model's record: $ms ms (an upper bound: it includes the status write and the polls)"
  in_range "made healthy inside the window, the release is let through within $(real_s "$GATE_LATENCY") s" \
    "$ms" 0 "$(real_s "$((GATE_LATENCY * 1000))")"
  still_before a 2026-03-07T00:10:00Z "the release let through inside the window"
  now_is "the held release is applied" "$REL1" get "$(hc_path "$ns" hc1)" .spec.release.image
  eventually "ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted \
    hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "WindowOpened Event once let through" 1 count_events "$ns" hc1 WindowOpened

  # An override with a reason: who, when and why on the object, in the
  # companion and in an Event that names its expiry.
  must api PATCH "$(hc_path "$ns" hc1)" "$(jq -nc --arg cm "$CM" '{metadata: {annotations: {
    ($cm + "/strategy"): "PermissiveUntil", ($cm + "/permissive-until"): "2026-03-08T00:00:00Z",
    ($cm + "/reason"): "INC-7 hotfix"}}}')" || return
  now_is "the override records who made it" "$by" \
    get "$(hc_path "$ns" hc1)" ".metadata.annotations[\"$CM/override-by\"]"
  eventually "the companion's audit: the override's author and reason" "$by/INC-7 hotfix" \
    hc_cm "$ns" hc1 '"\(.audit.override.by)/\(.audit.override.reason)"'
  eventually "an OverrideSet Event" 1 count_events "$ns" hc1 OverrideSet
  check_contains "the Event names the override's expiry" "it expires at 2026-03-08T00:00:00Z" \
    "$(api GET "/api/v1/namespaces/$ns/events" | jq -r '.items[] | select(.reason == "OverrideSet") | .message')"
}

model_suite_begin
run_scenario unhealthy_cluster_skips_window
run_scenario pulled_release_held_at_window
summary
