#!/usr/bin/env bash
# Release waves (DESIGN.md 3.14) beside the HyperShift / Cluster API
# behaviour model, with the admission webhooks holding the release. The
# controller reads the `waves` key of its --guard-config file: canary, early
# and fleet waves by the label fleet.example.com/wave, each with a soak on
# the wave before. The question each check answers is what HyperShift would
# have started (the model's record, spec.release.image) and what the
# cluster's users and OCM see (the conditions ChangesPaused and
# ChangesPending, the companion's `wave`, the Events, the admission warning,
# change_management_wave_clusters). Windows are daily, 00:00-04:00 UTC.
#
#   1. A release held for six clusters on the evening before: the canaries
#      start at the window; HyperShift (the model) completes it; the early
#      wave waits for the soak (WaitingForSoak with the instant), which ends
#      inside the window, and starts at that instant; the fleet's soak ends
#      after the window closed: it starts at the next day's window. No
#      cluster starts before the soak of the wave before has ended (the
#      model's record against the completion times HyperShift wrote).
#   2. Every writer is a user of the holds: a merge patch, a client-side
#      and a server-side apply and a full update (GET, then PUT) of early
#      clusters inside an open window, before the canary's soak ended: each
#      is held (the warning names WaitingForSoak and the soak's end), and
#      each starts at the soak's end.
#   3. A canary Degraded while it runs the release: the later waves say
#      WaveHalted naming it and its condition, nothing starts in the open
#      window; healthy again, the early wave starts within 2 s (real) and
#      the fleet waits for the early wave's soak.
#   4. blockedReleases: a blocked release is held with ReleaseBlocked in
#      every wave, the canary's too, in an open window, and an override
#      (PermissiveUntil with its reason) does not let it through; the same
#      override lets a release that waits for its soak go (the Event says
#      the waves were skipped, the write records it for the audit), and a
#      release asked for under it goes in the write that asks for it.
#   5. A NodePool release of an early cluster waits until the canary's pool
#      has completed it (UpdatingVersion False, AsExpected) and the soak
#      passed, then rolls at the soak's end.
#
# 231 checks in about 100 s. Negative control: with WAVES=0 (the guard
# rails' file without `waves`) 149 fail: every wave's release starts at
# the first window, in every scenario.
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller
# and the model. CTL_E2E_ONLY="fn ..." runs only the named scenarios; the
# NodePool scenario also runs beside Cluster API's own controllers
# (CTL_E2E_ONLY=nodepool_follows_waves make e2e-capi
# E2E_ONLY=e2e/controller/test_waves.sh: about 130 s, its clock 4 times
# slower). Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

WH_NAME=hcp-e2e-waves-$$
WAVE_KEY=fleet.example.com/wave
# The waves read every Completed entry of status.version.history: the
# clusters here have completed 4.17.0 alone, so that no wave ran the
# releases asked for before the scenario's own steps.
MK_HC_COMPLETED=""
REL6=quay.io/openshift-release-dev/ocp-release:4.17.6-x86_64
GATE_LATENCY=2 # real seconds from "healthy" to the release let through

# wave_guard FILE SOAK [YAML]: the guard rails' file: waves canary (in
# namespace $NS_W only), early and fleet (minClusters 2) by the label
# WAVE_KEY, early and fleet with soak SOAK; YAML (lines under `waves`)
# appended. WAVES=0 (a negative control): a file without them.
wave_guard() {
  if [ "${WAVES:-1}" = 0 ]; then
    echo "{}" >"$1"
    return
  fi
  cat >"$1" <<YAML
waves:
  sequence:
  - name: canary
    selector:
      matchLabels: {$WAVE_KEY: canary}
      namespaces: [$NS_W]
  - name: early
    selector:
      matchLabels: {$WAVE_KEY: early}
    soak: $2
  - name: fleet
    selector:
      matchLabels: {$WAVE_KEY: fleet}
    soak: $2
    minClusters: 2
${3:-}
YAML
}

# wave_hc NAME WAVE: a HostedCluster of $NS_W under the daily policy (mk_hc),
# labelled for WAVE as OCM or the fleet's GitOps label it.
wave_hc() {
  mk_hc "$NS_W" "$1" policy=daily || return 1
  api PATCH "$(hc_path "$NS_W" "$1")" "$(jq -nc --arg k "$WAVE_KEY" --arg v "$2" \
    '{metadata: {labels: {($k): $v}}}')" >/dev/null
}

# hc_ran NAME IMAGE COMPLETED-AT: HostedCluster NAME of $NS_W runs IMAGE,
# which HyperShift completed at COMPLETED-AT: spec.release and
# status.version as HyperShift leaves them (desired, a Completed history
# entry before 4.17.0's). Written before the webhooks hold anything.
hc_ran() {
  local gen
  gen=$(api PATCH "$(hc_path "$NS_W" "$1")" "$(jq -nc --arg i "$2" '{spec: {release: {image: $i}}}')" |
    jq -r .metadata.generation) || return 1
  api PATCH "$(hc_path "$NS_W" "$1")/status" "$(jq -nc --arg i "$2" --arg t "$3" --arg i0 "$REL0" \
    --argjson g "$gen" '($i | capture(":(?<v>[0-9]+[.][0-9]+[.][0-9]+)").v) as $v | [
    {op: "add", path: "/status/version", value: {desired: {image: $i, version: $v},
      observedGeneration: $g, availableUpdates: null, history: [
        {state: "Completed", image: $i, version: $v,
         startedTime: ($t | fromdateiso8601 - 1800 | todateiso8601), completionTime: $t, verified: false},
        {state: "Completed", image: $i0, version: "4.17.0", startedTime: "2026-01-01T00:00:00Z",
         completionTime: "2026-01-01T01:00:00Z", verified: false}]}}]')" \
    application/json-patch+json >/dev/null
}

# wave_count SYSTEM WAVE RELEASE STATE: change_management_wave_clusters of
# that series on controller a (0 without one).
wave_count() {
  local v
  v=$(metric a "change_management_wave_clusters\\{system=\"$1\",wave=\"$2\",release=\"$3\",state=\"$4\"\\}")
  echo "${v:-0}"
}

# hc_wave NAME / np_wave NAME: the companion's wave of HostedCluster or
# NodePool NAME of $NS_W as "name/state/until/skipped" ("-" no until),
# "none" without one.
WAVE_JQ='.wave | if . == null then "none" else "\(.name)/\(.state)/\(.until // "-")/\(.skipped)" end'
hc_wave() { hc_cm "$NS_W" "$1" "$WAVE_JQ"; }
np_wave() { np_cm "$NS_W" "$1" "$WAVE_JQ"; }
# hc_paused NAME: "status/reason" of HostedCluster NAME's ChangesPaused;
# hc_msg NAME TYPE: a condition's message.
hc_paused() { hc_cond_sr "$NS_W" "$1" ChangesPaused; }
hc_msg() { cond "$(hc_path "$NS_W" "$1")" "$2" message; }
# wave_event NAME REASON: "type: message" of the first Event about NAME
# with REASON.
wave_event() {
  api GET "/api/v1/namespaces/$NS_W/events" | jq -r --arg o "$1" --arg r "$2" \
    '[.items[] | select(.involvedObject.name == $o and .reason == $r)][0] // {} | "\(.type): \(.message)"'
}
# inits NAME: the model's control-plane initiations of HostedCluster NAME.
inits() { model_count controlplane-initiation "$NS_W/$1"; }
# inits_before NAME RFC3339: those at a simulated instant before RFC3339
# (the record's times carry milliseconds).
inits_before() { model_count_before controlplane-initiation "$NS_W/$1" "${2%Z}.000Z"; }
# inits_to NAME: the releases those initiations went to, space-separated.
inits_to() {
  model_records | jq -rs --arg o "$NS_W/$1" \
    '[.[] | select(.event == "controlplane-initiation" and .object == $o) | .to] | join(" ")'
}
# completed NAME: "state/version" of HostedCluster NAME's newest history
# entry; done_at NAME: its completionTime.
completed() { get "$(hc_path "$NS_W" "$1")" '.status.version.history[0] | "\(.state)/\(.version)"'; }
done_at() { get "$(hc_path "$NS_W" "$1")" '.status.version.history[0].completionTime'; }
# plus RFC3339 SECONDS: the instant SECONDS later; later A B: the later of two.
plus() { rfc3339 $(($(epoch "$1") + $2)); }
later() { if [ "$(epoch "$1")" -ge "$(epoch "$2")" ]; then echo "$1"; else echo "$2"; fi; }
# annotation NAME KEY: annotation $CM/KEY of HostedCluster NAME ("" none);
# requested NAME: its held release request; spec_release NAME: its release.
annotation() { get "$(hc_path "$NS_W" "$1")" ".metadata.annotations[\"$CM/$2\"] // \"\""; }
requested() { annotation "$1" requested-release-image; }
spec_release() { get "$(hc_path "$NS_W" "$1")" .spec.release.image; }
# not_in NEEDLE HAYSTACK: HAYSTACK does not contain NEEDLE.
not_in() { [[ "$2" != *"$1"* ]]; }
# write_release NAME IMAGE: a person's `kubectl patch` of HostedCluster
# NAME's release; prints what kubectl printed (the warnings).
write_release() {
  k patch hostedcluster "$1" -n "$NS_W" --type merge \
    -p "$(jq -nc --arg i "$2" '{spec: {release: {image: $i}}}')" 2>&1
}
# override NAME: an SRE's PermissiveUntil on HostedCluster NAME, with the
# reason it is audited with.
override() {
  set_annotations "$(hc_path "$NS_W" "$1")" "$(jq -nc --arg cm "$CM" '{
    ($cm + "/strategy"): "PermissiveUntil", ($cm + "/permissive-until"): "2026-03-11T00:00:00Z",
    ($cm + "/reason"): "INC-42 fleet hotfix"}')" >/dev/null
}

# ---- 1. the waves in order -------------------------------------------------------

waves_in_order() {
  local c soak1 soak2
  NS_W=$(new_ns order) || return
  wave_guard "$CTL_TMP/guard-order.yaml" 2h
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-order.yaml")
  must mk_policy "$NS_W" daily "$(daily_policy 00:00 4h)" || return
  for c in c1:canary c2:canary e1:early e2:early f1:fleet f2:fleet; do
    must wave_hc "${c%%:*}" "${c#*:}" || return
  done
  # Half an hour of simulated time a real second: the night between the
  # two windows takes 40 s.
  model_scenario "$NS_W" 2026-03-09T20:00:00Z 1800 "c1 c2 e1 e2 f1 f2" --hc-status \
    --controlplane-update-duration 20m || return
  for c in c1 c2 e1 e2 f1 f2; do
    release_held "$c: a release on the evening before" "$(hc_path "$NS_W" "$c")" "$REL1" "$REL0"
  done
  EVENTUALLY=3 eventually "before the window, the companion says what the early wave waits for" \
    early/WaitingForSoak/-/false hc_wave e1
  check_contains "... no canary has completed 4.17.1" \
    "wave early waits for wave canary: 4.17.1 completed on 0 of the 2 clusters it needs" \
    "$(hc_cm "$NS_W" e1 .wave.message)"
  eventually "the fleet waits for the early wave" fleet/WaitingForSoak/-/false hc_wave f1
  check_contains "... on both of its clusters (minClusters 2)" \
    "wave fleet waits for wave early: 4.17.1 completed on 0 of the 2 clusters it needs" \
    "$(hc_cm "$NS_W" f1 .wave.message)"
  now_is "the first wave waits for no wave" none hc_wave c1
  now_is "the window holds the early wave's release first (ChangesPaused)" \
    True/OutsideMaintenanceWindow hc_paused e1
  eventually "change_management_wave_clusters: early, 4.17.1, WaitingForSoak" 2 \
    wave_count control-plane early 4.17.1 WaitingForSoak
  now_is "... fleet, 4.17.1, WaitingForSoak" 2 wave_count control-plane fleet 4.17.1 WaitingForSoak
  now_is "... canary, 4.17.0 (what it runs), Completed" 2 wave_count control-plane canary 4.17.0 Completed
  now_is "... no canary held by the waves" 0 wave_count control-plane canary 4.17.1 WaitingForSoak
  still_before a 2026-03-10T00:00:00Z "the verdicts before the window"

  # The window: the canaries go.
  starts_at a "c1 (canary): HyperShift starts the release at the window" 2026-03-10T00:00:00Z 1 \
    controlplane-initiation "$NS_W/c1"
  starts_at a "c2 (canary): HyperShift starts the release at the window" 2026-03-10T00:00:00Z 1 \
    controlplane-initiation "$NS_W/c2"
  eventually "the early wave's release is held by the waves in the open window" \
    True/WaitingForSoak hc_paused e1
  EVENTUALLY=10 eventually "HyperShift (model) completes 4.17.1 on c1" Completed/4.17.1 completed c1
  EVENTUALLY=10 eventually "... and on c2" Completed/4.17.1 completed c2
  soak1=$(plus "$(later "$(done_at c1)" "$(done_at c2)")" 7200)
  echo "# the canaries completed 4.17.1 at $(done_at c1) and $(done_at c2): the early wave may go from $soak1"
  eventually "the companion names the soak's end" "early/WaitingForSoak/$soak1/false" hc_wave e1
  check_contains "ChangesPaused says when it may go" \
    "wave early waits for wave canary to soak: 4.17.1 completed on 2 of its clusters (2 needed), and may go from $soak1. It goes at the first window open after that; this window ends 2026-03-10T04:00:00Z" \
    "$(hc_msg e1 ChangesPaused)"
  now_is "ChangesPending=True (WaitingForSoak)" True/WaitingForSoak hc_cond_sr "$NS_W" e1 ChangesPending
  check_contains "ChangesPending says what it waits for" "Pending changes wait for the waves before to soak" \
    "$(hc_msg e1 ChangesPending)"
  now_is "the fleet's release too (ChangesPaused)" True/WaitingForSoak hc_paused f1
  eventually "a WaitingForSoak Event (Normal) about e1" 1 count_events "$NS_W" e1 WaitingForSoak
  check_contains "... it says what the wave waits for" "Normal: The held release is not let through yet: wave early waits for wave canary" \
    "$(wave_event e1 WaitingForSoak)"
  eventually "change_management_wave_clusters: canary, 4.17.1, Completed" 2 \
    wave_count control-plane canary 4.17.1 Completed
  now_is "... early, 4.17.1, WaitingForSoak" 2 wave_count control-plane early 4.17.1 WaitingForSoak
  for c in e1 e2 f1 f2; do
    now_is "$c: nothing started while the canaries soak (model record)" 0 inits "$c"
  done
  now_is "e1: spec.release.image stays" "$REL0" spec_release e1
  still_before a "$soak1" "the early wave soaking"

  # The soak ends inside the window: the early wave goes at that instant.
  starts_at a "e1 (early): HyperShift starts the release at the soak's end" "$soak1" 1 \
    controlplane-initiation "$NS_W/e1"
  starts_at a "e2 (early): HyperShift starts the release at the soak's end" "$soak1" 1 \
    controlplane-initiation "$NS_W/e2"
  EVENTUALLY=10 eventually "HyperShift (model) completes 4.17.1 on e1" Completed/4.17.1 completed e1
  EVENTUALLY=10 eventually "... and on e2" Completed/4.17.1 completed e2
  soak2=$(plus "$(later "$(done_at e1)" "$(done_at e2)")" 7200)
  echo "# the early wave completed 4.17.1 at $(done_at e1) and $(done_at e2): the fleet may go from $soak2"
  check "the fleet's soak ends after the window closed ($soak2)" \
    lt "$(epoch 2026-03-10T04:00:00Z)" "$(epoch "$soak2")"
  eventually "the fleet's companion names its soak's end" "fleet/WaitingForSoak/$soak2/false" hc_wave f1
  sleep_until_sim a 2026-03-10T04:00:00Z 0.5
  now_is "the window closed: it holds the fleet's release first" True/OutsideMaintenanceWindow hc_paused f1
  now_is "the companion still names the soak's end" "fleet/WaitingForSoak/$soak2/false" hc_wave f1
  for c in f1 f2; do
    now_is "$c: nothing started in the first window (model record)" 0 inits "$c"
  done
  now_is "one WaitingForSoak Event about f1 (held by the waves all the window long)" 1 \
    count_events "$NS_W" f1 WaitingForSoak
  still_before a 2026-03-11T00:00:00Z "the fleet held overnight"

  # The next day's window is the first after the fleet's soak.
  starts_at a "f1 (fleet): HyperShift starts the release at the next day's window" \
    2026-03-11T00:00:00Z 1 controlplane-initiation "$NS_W/f1"
  starts_at a "f2 (fleet): HyperShift starts the release at the next day's window" \
    2026-03-11T00:00:00Z 1 controlplane-initiation "$NS_W/f2"
  for c in e1 e2; do
    now_is "$c: no start before the canaries' soak ended at $soak1 (model record)" 0 inits_before "$c" "$soak1"
  done
  for c in f1 f2; do
    now_is "$c: no start before the early wave's soak ended at $soak2 (model record)" 0 inits_before "$c" "$soak2"
  done
  for c in c1 c2 e1 e2 f1 f2; do
    now_is "$c: one control-plane start in all, to 4.17.1 (model record)" "$REL1" inits_to "$c"
  done
  now_is "one WaitingForSoak Event about e1" 1 count_events "$NS_W" e1 WaitingForSoak
  now_is "the early wave held by the waves no more" 0 wave_count control-plane early 4.17.1 WaitingForSoak
}

# ---- 2. every writer ---------------------------------------------------------------

# wave_write NAME HOW IMAGE: HostedCluster NAME's release written as HOW
# does: patch (`kubectl patch`, a merge patch), csa (`kubectl apply` of the
# object read), ssa (`kubectl apply --server-side`, field manager ocm), put
# (the object read, then written whole with its resourceVersion, as
# HyperShift's and OCM's clients update); prints kubectl's output (the
# warnings), fails as kubectl does.
wave_write() {
  local doc
  case $2 in
  patch) write_release "$1" "$3" ;;
  csa)
    doc=$(k get hostedcluster "$1" -n "$NS_W" -o json | jq -c --arg i "$3" '.spec.release.image = $i |
      del(.metadata.resourceVersion, .metadata.managedFields, .status)') || return 1
    k apply -f - <<<"$doc" 2>&1
    ;;
  ssa)
    jq -nc --arg ns "$NS_W" --arg n "$1" --arg i "$3" '{apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster", metadata: {name: $n, namespace: $ns}, spec: {release: {image: $i}}}' |
      k apply --server-side --force-conflicts --field-manager=ocm -f - 2>&1
    ;;
  put)
    k get hostedcluster "$1" -n "$NS_W" -o json | jq -c --arg i "$3" '.spec.release.image = $i' |
      k replace -f - 2>&1
    ;;
  esac
}

every_writer_held() {
  local how out rc soak=2026-03-10T01:50:00Z
  NS_W=$(new_ns writers) || return
  wave_guard "$CTL_TMP/guard-writers.yaml" 2h
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-writers.yaml")
  must mk_policy "$NS_W" daily "$(daily_policy 00:00 4h)" || return
  must wave_hc c1 canary || return
  # The canary completed 4.17.1 ten minutes before the window opened.
  must hc_ran c1 "$REL1" 2026-03-09T23:50:00Z || return
  for how in patch csa ssa put; do must wave_hc "$how" early || return; done
  # Inside the window from the start; ten simulated minutes a real second.
  model_scenario "$NS_W" 2026-03-10T00:01:00Z 600 "c1 patch csa ssa put" || return
  for how in patch csa ssa put; do
    out=$(wave_write "$how" "$how" "$REL1")
    rc=$?
    echo "# $how: ${out//$'\n'/ | }"
    check "$how: the write is admitted" test "$rc" -eq 0
    check_contains "$how: the warning says the waves hold it until the soak's end" \
      "spec.release.image is held until the first window from $soak (release waves: WaitingForSoak)" "$out"
    now_is "$how: spec.release.image is not what it asked for yet" "$REL0" spec_release "$how"
    now_is "$how: the request is recorded" "$REL1" requested "$how"
  done
  still_before a "$soak" "the four writes, in the open window"
  for how in patch csa ssa put; do
    eventually "$how: ChangesPaused=True (WaitingForSoak)" True/WaitingForSoak hc_paused "$how"
    now_is "$how: the companion names the soak's end" "early/WaitingForSoak/$soak/false" hc_wave "$how"
    now_is "$how: nothing started (model record)" 0 inits "$how"
  done
  check_contains "ChangesPaused names the canary's completion" \
    "4.17.1 completed on 1 of its clusters (1 needed), and may go from $soak" "$(hc_msg put ChangesPaused)"
  eventually "change_management_wave_clusters: early, 4.17.1, WaitingForSoak" 4 \
    wave_count control-plane early 4.17.1 WaitingForSoak
  now_is "... canary, 4.17.1, Completed" 1 wave_count control-plane canary 4.17.1 Completed
  still_before a "$soak" "the holds in the open window"
  for how in patch csa ssa put; do
    starts_at a "$how: HyperShift starts the release at the soak's end" "$soak" 1 \
      controlplane-initiation "$NS_W/$how"
  done
  for how in patch csa ssa put; do
    now_is "$how: the held release is applied" "$REL1" spec_release "$how"
    now_is "$how: its record is gone" "" requested "$how"
  done
}

# ---- 3. a canary breaks ------------------------------------------------------------

canary_degraded_halts() {
  local c out t0 ms
  NS_W=$(new_ns halt) || return
  wave_guard "$CTL_TMP/guard-halt.yaml" 1h
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-halt.yaml")
  must mk_policy "$NS_W" daily "$(daily_policy 00:00 4h)" || return
  must wave_hc c1 canary || return
  # It completed 4.17.1 the day before (the soak has passed), then turned
  # Degraded.
  must hc_ran c1 "$REL1" 2026-03-09T06:00:00Z || return
  must set_hc_health "$NS_W" c1 True True 2026-03-09T20:00:00Z || return
  for c in e1:early e2:early f1:fleet; do must wave_hc "${c%%:*}" "${c#*:}" || return; done
  model_scenario "$NS_W" 2026-03-10T00:05:00Z 60 "c1 e1 e2 f1" || return
  for c in e1 e2 f1; do
    out=$(write_release "$c" "$REL1")
    check_contains "$c: in the open window, the warning says the waves halted it" \
      "spec.release.image is held until the release waves let it through (WaveHalted)" "$out"
    now_is "$c: spec.release.image stays" "$REL0" spec_release "$c"
  done
  eventually "e1: ChangesPaused=True (WaveHalted)" True/WaveHalted hc_paused e1
  check_contains "... naming the canary that runs 4.17.1" \
    "The held release is not let through: wave early waits: $NS_W/c1 of wave canary runs 4.17.1 and is unhealthy" \
    "$(hc_msg e1 ChangesPaused)"
  check_contains "... and its condition" "Degraded is True (reason UnavailableReplicas)" "$(hc_msg e1 ChangesPaused)"
  now_is "e1: ChangesPending=True (WaveHalted)" True/WaveHalted hc_cond_sr "$NS_W" e1 ChangesPending
  eventually "f1 (fleet): ChangesPaused=True (WaveHalted)" True/WaveHalted hc_paused f1
  check_contains "... naming the canary too" "wave fleet waits: $NS_W/c1 of wave canary runs 4.17.1 and is unhealthy" \
    "$(hc_msg f1 ChangesPaused)"
  now_is "the companion's wave" early/WaveHalted/-/false hc_wave e1
  check_contains "... its message names the canary" "$NS_W/c1 of wave canary runs 4.17.1 and is unhealthy" \
    "$(hc_cm "$NS_W" e1 .wave.message)"
  eventually "a WaveHalted Event about e1" 1 count_events "$NS_W" e1 WaveHalted
  check_contains "... a Warning naming the canary" "Warning: The held release is not let through: wave early waits: $NS_W/c1" \
    "$(wave_event e1 WaveHalted)"
  # The window is open: the waves hold the release, no window closed, and
  # the next window is tomorrow's, not this one's end.
  check "no WindowClosed Event about e1 inside its window" test "$(count_events "$NS_W" e1 WindowClosed)" = 0
  check "the ChangeHeld Event does not call the open window's end the window it waits for" \
    not_in "until the window at 2026-03-10T04:00:00Z" "$(wave_event e1 ChangeHeld)"
  check_contains "... it says what holds it in the open window" "is held in the open window (" \
    "$(wave_event e1 ChangeHeld)"
  eventually "change_management_wave_clusters: canary, 4.17.1, Unhealthy" 1 \
    wave_count control-plane canary 4.17.1 Unhealthy
  now_is "... early, 4.17.1, WaveHalted" 2 wave_count control-plane early 4.17.1 WaveHalted
  now_is "... fleet, 4.17.1, WaveHalted" 1 wave_count control-plane fleet 4.17.1 WaveHalted
  sleep 1
  for c in e1 e2 f1; do
    now_is "$c: nothing started in the open window (model record)" 0 inits "$c"
  done
  still_before a 2026-03-10T04:00:00Z "the halt inside the window"

  # Healthy again: the early wave goes on the canary's status event.
  t0=$(now_us)
  must set_hc_health "$NS_W" c1 True False || return
  while { [ "$(inits e1)" -lt 1 ] || [ "$(inits e2)" -lt 1 ]; } &&
    [ $(($(now_us) - t0)) -lt $((GATE_LATENCY * 3 * 1000000)) ]; do
    sleep 0.02
  done
  ms=$((($(now_us) - t0) / 1000))
  echo "# figure: canary healthy (status write) -> both early clusters' control-plane initiations seen in the model's record: $ms ms (an upper bound; load average $(cut -d' ' -f1 /proc/loadavg))"
  in_range "healthy again, the early wave starts within $(real_s "$GATE_LATENCY") s (real)" \
    "$ms" 0 "$(real_s "$((GATE_LATENCY * 1000))")"
  now_is "e1: the held release is applied" "$REL1" spec_release e1
  now_is "e2: the held release is applied" "$REL1" spec_release e2
  still_before a 2026-03-10T04:00:00Z "the early wave let through inside the window"
  # The fleet waits for the early wave to complete it and soak now.
  eventually "f1: now ChangesPaused=True (WaitingForSoak)" True/WaitingForSoak hc_paused f1
  check_contains "... for the early wave" "wave fleet waits for wave early: 4.17.1 completed on 0 of the 2 clusters it needs" \
    "$(hc_msg f1 ChangesPaused)"
  eventually "what holds it changed: a WaitingForSoak Event about f1" 1 count_events "$NS_W" f1 WaitingForSoak
  now_is "f1: nothing started (model record)" 0 inits f1
  eventually "change_management_wave_clusters: canary, 4.17.1, Completed" 1 \
    wave_count control-plane canary 4.17.1 Completed
  now_is "... canary, 4.17.1, Unhealthy no more" 0 wave_count control-plane canary 4.17.1 Unhealthy
  now_is "... early held no more" 0 wave_count control-plane early 4.17.1 WaveHalted
  now_is "one WaveHalted Event about e1 in all" 1 count_events "$NS_W" e1 WaveHalted
}

# ---- 4. blocked releases and the override -------------------------------------------

blocked_release_never_goes() {
  local c out t0 ms at skipped
  NS_W=$(new_ns block) || return
  wave_guard "$CTL_TMP/guard-block.yaml" 2h '  blockedReleases: ["4.17.2", ">=4.17.5 <4.17.8"]'
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-block.yaml")
  must mk_policy "$NS_W" daily "$(daily_policy 00:00 4h)" || return
  for c in c1:canary e1:early e2:early e3:early; do must wave_hc "${c%%:*}" "${c#*:}" || return; done
  model_scenario "$NS_W" 2026-03-10T00:05:00Z 60 "c1 e1 e2 e3" || return
  out=$(write_release c1 "$REL2")
  check_contains "c1 (canary), 4.17.2 in the open window: the warning says ReleaseBlocked" \
    "spec.release.image is held until the release waves let it through (ReleaseBlocked)" "$out"
  now_is "c1: spec.release.image stays" "$REL0" spec_release c1
  now_is "c1: the request is recorded" "$REL2" requested c1
  out=$(write_release e1 "$REL6")
  check_contains "e1 (early), 4.17.6 (in a blocked range): ReleaseBlocked" \
    "spec.release.image is held until the release waves let it through (ReleaseBlocked)" "$out"
  eventually "c1: ChangesPaused=True (ReleaseBlocked)" True/ReleaseBlocked hc_paused c1
  check_contains "... naming the entry" \
    "The held release is not let through: release 4.17.2 is blocked for the fleet (waves.blockedReleases \"4.17.2\")" \
    "$(hc_msg c1 ChangesPaused)"
  now_is "c1: ChangesPending=True (ReleaseBlocked)" True/ReleaseBlocked hc_cond_sr "$NS_W" c1 ChangesPending
  eventually "e1: ChangesPaused=True (ReleaseBlocked)" True/ReleaseBlocked hc_paused e1
  check_contains "... naming the range" "release 4.17.6 is blocked for the fleet (waves.blockedReleases \">=4.17.5 <4.17.8\")" \
    "$(hc_msg e1 ChangesPaused)"
  now_is "c1: the companion's wave" canary/ReleaseBlocked/-/false hc_wave c1
  now_is "e1: the companion's wave" early/ReleaseBlocked/-/false hc_wave e1
  eventually "a ReleaseBlocked Event about c1" 1 count_events "$NS_W" c1 ReleaseBlocked
  check_contains "... a Warning" "Warning: The held release is not let through: release 4.17.2 is blocked" \
    "$(wave_event c1 ReleaseBlocked)"
  eventually "a ReleaseBlocked Event about e1" 1 count_events "$NS_W" e1 ReleaseBlocked
  eventually "change_management_wave_clusters: canary, 4.17.2, ReleaseBlocked" 1 \
    wave_count control-plane canary 4.17.2 ReleaseBlocked
  now_is "... early, 4.17.6, ReleaseBlocked" 1 wave_count control-plane early 4.17.6 ReleaseBlocked

  # An override does not pass a blocked release.
  must override c1 || return
  must override e1 || return
  eventually "the override on c1 is seen (OverrideSet Event)" 1 count_events "$NS_W" c1 OverrideSet
  eventually "... and on e1" 1 count_events "$NS_W" e1 OverrideSet
  sleep 1
  for c in c1 e1; do
    now_is "$c: under the override, nothing started (model record)" 0 inits "$c"
    now_is "$c: still ReleaseBlocked" True/ReleaseBlocked hc_paused "$c"
  done
  now_is "c1: spec.release.image stays under the override" "$REL0" spec_release c1

  # The same override passes a release that waits for its soak.
  out=$(write_release e2 "$REL1")
  check_contains "e2 (early), 4.17.1, no canary ran it: the warning says WaitingForSoak" \
    "spec.release.image is held until the release waves let it through (WaitingForSoak)" "$out"
  eventually "e2: ChangesPaused=True (WaitingForSoak)" True/WaitingForSoak hc_paused e2
  check_contains "... never, while no canary completed it" "4.17.1 completed on 0 of the 1 clusters it needs" \
    "$(hc_msg e2 ChangesPaused)"
  sleep 1
  now_is "e2: nothing started (model record)" 0 inits e2
  t0=$(now_us)
  must override e2 || return
  while [ "$(inits e2)" -lt 1 ] && [ $(($(now_us) - t0)) -lt $((GATE_LATENCY * 3 * 1000000)) ]; do
    sleep 0.02
  done
  ms=$((($(now_us) - t0) / 1000))
  echo "# figure: override written -> e2's control-plane initiation seen in the model's record: $ms ms"
  in_range "the override lets e2's release past the waves within $(real_s "$GATE_LATENCY") s (real)" \
    "$ms" 0 "$(real_s "$((GATE_LATENCY * 1000))")"
  now_is "e2: the held release is applied" "$REL1" spec_release e2
  eventually "a ChangesInitiated Event about e2" 1 count_events "$NS_W" e2 ChangesInitiated
  check_contains "... saying the override let it past the release waves" \
    "The override in force let the release past the release waves" "$(wave_event e2 ChangesInitiated)"
  now_is "e2 is held by the waves no more (metric)" 0 wave_count control-plane early 4.17.1 WaitingForSoak
  at=$(annotation e2 override-at)
  skipped=$(annotation e2 override-skipped)
  check_contains "the write that let it through records what the override skipped, for that override" \
    "$at release waves: wave early waits for wave canary: 4.17.1 completed on 0 of the 1 clusters it needs" "$skipped"
  eventually "the companion's audit shows it beside the override" "${skipped#"$at "}" \
    hc_cm "$NS_W" e2 '.audit.override.skipped // ""'
  now_is "c1: still nothing started (model record)" 0 inits c1
  now_is "e1: still nothing started (model record)" 0 inits e1
  now_is "c1: the override let nothing past (no override-skipped record)" "" annotation c1 override-skipped

  # A release asked for while the override is in force goes in the write
  # that asks for it, with the record.
  must override e3 || return
  eventually "the override on e3 is seen (OverrideSet Event)" 1 count_events "$NS_W" e3 OverrideSet
  out=$(write_release e3 "$REL1")
  check "e3 (early), 4.17.1 under the override: no hold warning" not_in "is held" "$out"
  now_is "e3: the write goes through as written" "$REL1" spec_release e3
  now_is "e3: nothing is recorded as held" "" requested e3
  check_contains "e3: the write records what the override skipped" \
    "$(annotation e3 override-at) release waves: wave early waits for wave canary: 4.17.1 completed on 0 of the 1 clusters it needs" \
    "$(annotation e3 override-skipped)"
  check "HyperShift starts it (model record)" wait_for 5 model_more controlplane-initiation "$NS_W/e3" 0
}

# ---- 5. NodePools ---------------------------------------------------------------------

np_release() { get "$(np_path "$NS_W" "$1")" .spec.release.image; }
np_updating() { np_cond_sr "$NS_W" "$1" UpdatingVersion; }

nodepool_follows_waves() {
  local out soak ms0
  NS_W=$(new_ns pools) || return
  wave_guard "$CTL_TMP/guard-pools.yaml" 1h
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-pools.yaml")
  must mk_policy "$NS_W" daily "$(daily_policy 00:00 4h)" || return
  must wave_hc c1 canary || return
  must wave_hc e1 early || return
  # The control planes completed 4.17.1: their pools may run it.
  must hc_completed "$NS_W" c1 "$REL1" || return
  must hc_completed "$NS_W" e1 "$REL1" || return
  must model_np "$NS_W" npc c1 2 policy=daily || return
  must model_np "$NS_W" npe e1 2 policy=daily || return
  model_scenario "$NS_W" 2026-03-10T00:05:00Z 300 "c1 e1" --nodepool-updating-version \
    --replacement-duration 2m || return
  EVENTUALLY=$POOL_WAIT eventually "HyperShift (model) reports npc at 4.17.0" 4.17.0 \
    get "$(np_path "$NS_W" npc)" .status.version
  EVENTUALLY=$POOL_WAIT eventually "... and npe" 4.17.0 get "$(np_path "$NS_W" npe)" .status.version
  ms0=$(model_count machineset-created "$NS_W-e1/npe")

  out=$(k patch nodepool npe -n "$NS_W" --type merge \
    -p "$(jq -nc --arg i "$REL1" '{spec: {release: {image: $i}}}')" 2>&1)
  echo "# npe: $out"
  check_contains "npe (early), 4.17.1 in the open window: the warning says the waves hold it" \
    "spec.release: held until the release waves let it through (WaitingForSoak)" "$out"
  check "... and calls no window the next that is none" not_in "next window" "$out"
  now_is "npe: spec.release.image stays" "$REL0" np_release npe
  now_is "npe: the request is recorded" "$REL1" \
    get "$(np_path "$NS_W" npe)" ".metadata.annotations[\"$CM/requested-nodepool-spec\"] // \"{}\" | fromjson | .release.image // \"\""
  eventually "npe: ChangesPaused=True (WaitingForSoak)" True/WaitingForSoak np_cond_sr "$NS_W" npe ChangesPaused
  check_contains "... no canary pool completed it" "wave early waits for wave canary: 4.17.1 completed on 0 of the 1 clusters it needs" \
    "$(cond "$(np_path "$NS_W" npe)" ChangesPaused message)"
  eventually "a WaitingForSoak Event about npe" 1 count_events "$NS_W" npe WaitingForSoak

  # The canary's pool rolls to 4.17.1 (the first wave: nothing holds it).
  out=$(request_release "$(np_path "$NS_W" npc)" "$REL1")
  check_eq "npc (canary): 4.17.1 goes through in the open window" "$REL1" "$(jq -r .spec.release.image <<<"$out")"
  EVENTUALLY=$ROLLED_WAIT eventually "HyperShift (model) reports npc at 4.17.1" 4.17.1 \
    get "$(np_path "$NS_W" npc)" .status.version
  eventually "... UpdatingVersion False (AsExpected)" False/AsExpected np_updating npc
  soak=$(plus "$(cond "$(np_path "$NS_W" npc)" UpdatingVersion lastTransitionTime)" 3600)
  echo "# npc completed 4.17.1 at $(cond "$(np_path "$NS_W" npc)" UpdatingVersion lastTransitionTime): npe may go from $soak"
  eventually "npe: the companion names the soak's end" "early/WaitingForSoak/$soak/false" np_wave npe
  check_contains "npe: ChangesPaused says when it may go" \
    "4.17.1 completed on 1 of its clusters (1 needed), and may go from $soak" \
    "$(cond "$(np_path "$NS_W" npe)" ChangesPaused message)"
  eventually "change_management_wave_clusters: worker-nodes, canary, 4.17.1, Completed" 1 \
    wave_count worker-nodes canary 4.17.1 Completed
  now_is "... worker-nodes, early, 4.17.1, WaitingForSoak" 1 wave_count worker-nodes early 4.17.1 WaitingForSoak
  now_is "npe: HyperShift's template stays at 4.17.0" 4.17.0 md_version "$(md_path "$NS_W" e1 npe)"
  now_is "npe: no rollout started (no MachineSet for a new template, model record)" "$ms0" \
    model_count machineset-created "$NS_W-e1/npe"
  now_is "npe: no machine replaced (model record)" 0 model_count replacement-start "$NS_W-e1/npe"
  still_before a "$soak" "the early pool soaking"
  starts_at a "npe: Cluster API starts its rollout (a MachineSet for the new template) at the soak's end" \
    "$soak" 1 machineset-created "$NS_W-e1/npe" "$ms0"
  now_is "npe: the held release is applied" "$REL1" np_release npe
  now_is "npe: HyperShift's template is 4.17.1" 4.17.1 md_version "$(md_path "$NS_W" e1 npe)"
  check "npe: its machines are replaced (model record)" \
    wait_for "$POOL_WAIT" model_more replacement-start "$NS_W-e1/npe" 0
  now_is "one WaitingForSoak Event about npe" 1 count_events "$NS_W" npe WaitingForSoak
}

model_suite_begin
# Real seconds for a pool's machines to come up, and for a rollout of two
# to end: Cluster API's own take longer (instance "capi"; E_CAPI is read by
# model_suite_begin).
POOL_WAIT=10 ROLLED_WAIT=15
if [ "${E_CAPI:-}" = 1 ]; then POOL_WAIT=40 ROLLED_WAIT=90; fi
run_scenario waves_in_order
run_scenario every_writer_held
run_scenario canary_degraded_halts
run_scenario blocked_release_never_goes
run_scenario nodepool_follows_waves
summary
