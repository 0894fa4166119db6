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
# A pre-start check of another system (DESIGN.md 3.15) that refuses the
# release once keeps it held at its window (CheckFailed); when it says yes
# on its next attempt the release goes within 1 s of that answer. A
# NodePool release asked for inside an open window waits for the checks of
# the worker nodes the same way.
#
# The health after the change (DESIGN.md 3.15): a cluster Degraded five
# minutes after HyperShift completed its update is told once, when it has
# been Degraded for the grace time, in every place that tells.
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
POOL_WAIT=10   # real seconds for a pool's first machine (Cluster API's take
               # longer: 40, set once model_suite_begin has read the instance)

gate_holds() { metric a 'change_management_health_gate_holds_total\{kind="HostedCluster",system="control-plane"\}'; }

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

# A pre-start check of another system (DESIGN.md 3.15) that refuses the
# held release once: asked its lead before the window (the CloudEvent
# pre-start with the bearer token), it answers 503; at the window's
# opening the release stays held (CheckFailed, naming the check and its
# answer's first line, everywhere that tells); asked again with backoff,
# it answers 200 and the release goes within 1 s of that answer. A release
# asked for inside the open window is held at admission and goes at the
# check's yes.
check_holds() { metric a change_management_check_holds_total; }
check_answers() { metric a "change_management_check_answers_total\\{check=\"cab\",answer=\"$1\"\\}"; }
posts() { [ -f "$1/posts.jsonl" ] && jq -s --argjson s "$2" '[.[] | select(.status == $s)] | length' "$1/posts.jsonl" || echo 0; }
check_refuses_once() {
  local ns dir port doc t200 init lag
  ns=$(new_ns chk) || return
  dir=$CTL_TMP/check${CTL_RERUN:+-r$CTL_RERUN}
  mkdir -p "$dir"
  port=$(free_port)
  printf 'tok-cab-1\n' >"$dir/token"
  printf '503\nCAB freeze until Monday (CHG-1234)\nsecond line\n' >"$dir/answer"
  cat >"$CTL_TMP/guard-check.yaml" <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: hcp-controller-guard}
data:
  checks: |
    [{"name": "cab", "url": "http://127.0.0.1:$port/check", "tokenFile": "$dir/token",
      "timeout": "5s", "lead": "30m", "systems": ["control-plane"]}]
YAML
  check_recv_start "$dir" "$port"
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-check.yaml")
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 30m)" || return
  must mk_hc "$ns" hc3 policy=weekly || return
  must set_hc_health "$ns" hc3 True False || return
  model_scenario "$ns" 2026-03-06T23:57:00Z 30 hc3 --hc-status --controlplane-update-duration 2m ||
    return
  eventually "HyperShift (model) reports the running release in status.version" "$REL0" \
    get "$(hc_path "$ns" hc3)" '.status.version.desired.image // ""'
  release_held "a release on Friday evening" "$(hc_path "$ns" hc3)" "$REL1" "$REL0"
  EVENTUALLY=5 eventually "the check is asked within its lead, before the window" yes \
    bash -c "[ \$(jq -s length '$dir/posts.jsonl' 2>/dev/null || echo 0) -ge 1 ] && echo yes"
  still_before a 2026-03-07T00:00:00Z "the check asked"
  doc=$(head -1 "$dir/posts.jsonl")
  check_eq "the question: the CloudEvent pre-start about the HostedCluster, with the bearer token" \
    "io.openshift.hypershift.changemanagement.pre-start.v1 hostedclusters/$ns/hc3 pre-start Bearer tok-cab-1" \
    "$(jq -r '"\(.body.type) \(.body.subject) \(.body.data.step) \(.auth)"' <<<"$doc")"
  check_eq "it names the change and its window" "release $REL1 2026-03-07T00:00:00Z" \
    "$(jq -r '"\(.body.data.change) \(.body.data.window)"' <<<"$doc")"

  sleep_until_sim a 2026-03-07T00:00:00Z 1
  now_is "at the window's opening the refused release is not let through (model record)" 0 \
    model_count controlplane-initiation "$ns/hc3"
  now_is "spec.release.image stays" "$REL0" get "$(hc_path "$ns" hc3)" .spec.release.image
  eventually "ChangesPending=True (CheckFailed)" True/CheckFailed hc_cond_sr "$ns" hc3 ChangesPending
  local b told
  b=$(ctl_real_at a 2026-03-07T00:00:00Z)
  told=$(grep -m1 "CheckFailed kind=HostedCluster namespace=$ns name=hc3" "${CTL_LOG[a]}" | awk '{ print $1 }')
  told=$(awk -v t="$(secs "${told:-1970-01-01T00:00:00Z}")" -v b="$b" 'BEGIN { printf "%.3f", t - b }')
  echo "# figure: window open -> CheckFailed told (the controller's Event): $told s (load average $(cut -d' ' -f1 /proc/loadavg))"
  in_range "told within $(real_s 1) s of the window's opening, not before" "$told" 0 "$(real_s 1)"
  check_contains "the condition names the check and its answer's first line" \
    "check cab refused it: HTTP 503: CAB freeze until Monday (CHG-1234). The check is asked again while the window is open" \
    "$(cond "$(hc_path "$ns" hc3)" ChangesPaused message)"
  now_is "the companion's current state" ChangesPaused/CheckFailed \
    hc_cm "$ns" hc3 '.behavior.current | "\(.state)/\(.reason)"'
  eventually "a CheckFailed Event" 1 count_events "$ns" hc3 CheckFailed
  eventually "change_management_check_holds_total" 1 check_holds
  check "change_management_check_answers_total{answer=refused} counts the refusals" \
    test "$(check_answers refused)" -ge 1
  now_is "nothing allowed yet" 0 check_answers allowed
  "$HCP_BIN" explain --kubeconfig "$KCFG" hostedcluster "$ns/hc3" >"$CTL_TMP/explain-check" 2>&1
  check_contains "explain repeats the controller's word" "CheckFailed" "$(cat "$CTL_TMP/explain-check")"

  # The check says yes now: its next attempt (backoff) lets the release go.
  printf '200\nCAB-42 approved\n' >"$dir/answer"
  local t0=$SECONDS
  while [ "$(model_count controlplane-initiation "$ns/hc3")" -lt 1 ] && [ $((SECONDS - t0)) -lt 45 ]; do
    sleep 0.1
  done
  t200=$(jq -s '[.[] | select(.status == 200)][0].answered // 0' "$dir/posts.jsonl")
  init=$(model_records | jq -rs --arg o "$ns/hc3" '[.[] | select(.event == "controlplane-initiation" and .object == $o)][0].real // ""')
  lag=$(awk -v a="$(date -u -d "${init:-1970-01-01T00:00:00Z}" +%s.%N)" -v b="$t200" 'BEGIN { printf "%.3f", a - b }')
  echo "# figure: the check's 200 answer -> control-plane initiation (model record): $lag s (load average $(cut -d' ' -f1 /proc/loadavg))"
  in_range "allowed inside the window, the release is let through within $(real_s 1) s of the answer" \
    "$lag" 0 "$(real_s 1)"
  still_before a 2026-03-07T00:30:00Z "the release let through inside the window"
  now_is "the held release is applied" "$REL1" get "$(hc_path "$ns" hc3)" .spec.release.image
  now_is "one CheckFailed Event in all" 1 count_events "$ns" hc3 CheckFailed
  now_is "change_management_check_answers_total{answer=allowed}" 1 check_answers allowed
  sleep 1
  now_is "not asked again once allowed" 1 posts "$dir" 200

  # A release asked for inside the open window waits for the check too:
  # held at admission, the check asked at once, let through at its yes
  # (once HyperShift completed the update under way: the health gate).
  release_held "a release asked for inside the window" "$(hc_path "$ns" hc3)" "$REL2" "$REL1"
  EVENTUALLY=40 eventually "the check's yes lets it through in the window" "$REL2" \
    get "$(hc_path "$ns" hc3)" .spec.release.image
  still_before a 2026-03-07T00:30:00Z "the in-window release let through"
  now_is "the check was asked about it" 1 \
    bash -c "jq -s --arg c 'release $REL2' '[.[] | select(.body.data.change == \$c)] | length' '$dir/posts.jsonl'"
  recv_stop
}

# A NodePool change asked for inside an open window (DESIGN.md 3.15) waits
# for the pre-start checks of the worker nodes like one held for the
# window: held at admission (spec stays, the request recorded), the check
# asked at once; it says no (CheckFailed on the NodePool, nothing rolls, a
# scale still goes through), then yes: the controller applies the request
# within 1 s (real) of the answer and HyperShift writes the new template.
# Without the checks the same write goes at once (every other scenario).
pool_change_in_window_checked() {
  local ns dir port out doc md t0 t200 applied lag t_req
  ns=$(new_ns pchk) || return
  dir=$CTL_TMP/pcheck${CTL_RERUN:+-r$CTL_RERUN}
  mkdir -p "$dir"
  port=$(free_port)
  printf '503\nCAB-77: no node changes during the quarter close\n' >"$dir/answer"
  cat >"$CTL_TMP/guard-pcheck.yaml" <<YAML
checks:
  - {name: cab, url: "http://127.0.0.1:$port/check", timeout: 5s, lead: 30m, systems: [control-plane, worker-nodes]}
YAML
  check_recv_start "$dir" "$port"
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-pcheck.yaml")
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 4h)" || return
  must mk_hc "$ns" hc6 policy=weekly || return
  must hc_completed "$ns" hc6 "$REL1" || return
  must model_np "$ns" np1 hc6 1 policy=weekly || return
  md=$(md_path "$ns" hc6 np1)
  model_scenario "$ns" 2026-03-07T00:10:00Z 30 hc6 || return
  check "the model created the MachineDeployment and its machine" wait_for "$POOL_WAIT" \
    eval 'model_machines "$ns-hc6/np1" 1'

  t_req=$(date +%s.%N)
  out=$(request_release "$(np_path "$ns" np1)" "$REL1")
  check_eq "inside the open window, a NodePool release waits for the check: spec.release.image stays" \
    "$REL0" "$(jq -r .spec.release.image <<<"$out")"
  check_eq "the request is recorded on the NodePool" "$REL1" \
    "$(jq -r --arg k "$CM/requested-nodepool-spec" '.metadata.annotations[$k] // "{}" | fromjson | .release.image // ""' <<<"$out")"
  # Timed by the receiver's clock, not by when this script looks: on a busy
  # machine the refusal's backoff (1 s, doubling) may have asked again by then.
  check "the check is asked" wait_for 5 eval '[ "$(posts "$dir" 503)" -ge 1 ]'
  lag=$(jq -s --argjson t0 "$t_req" '.[0].t - $t0 | . * 1000 | round / 1000' "$dir/posts.jsonl")
  in_range "at once: within $(real_s 1) s (real) of the request" "$lag" 0 "$(real_s 1)"
  doc=$(head -1 "$dir/posts.jsonl")
  check_eq "the question: pre-start about the NodePool and its change" \
    "nodepools/$ns/np1 pre-start" "$(jq -r '"\(.body.subject) \(.body.data.step)"' <<<"$doc")"
  check_contains "naming the release" "release $REL1" "$(jq -r .body.data.change <<<"$doc")"
  eventually "ChangesPending=True (CheckFailed) on the NodePool" True/CheckFailed \
    np_cond_sr "$ns" np1 ChangesPending
  check_contains "naming the check and its answer" \
    "check cab refused it: HTTP 503: CAB-77: no node changes during the quarter close" \
    "$(cond "$(np_path "$ns" np1)" ChangesPending message)"
  eventually "a CheckFailed Event for the NodePool" 1 count_events "$ns" np1 CheckFailed
  now_is "HyperShift's template stays (nothing rolls)" 4.17.0 md_version "$md"
  api PATCH "$(np_path "$ns" np1)" '{"spec": {"replicas": 2}}' >/dev/null
  eventually "a scale while the change waits goes through" 2 get "$md" .spec.replicas

  printf '200\nCAB-77 approved\n' >"$dir/answer"
  t0=$SECONDS
  while [ "$(get "$(np_path "$ns" np1)" .spec.release.image)" != "$REL1" ] && [ $((SECONDS - t0)) -lt 70 ]; do
    sleep 0.1
  done
  applied=$(date +%s.%N)
  t200=$(jq -s '[.[] | select(.status == 200)][0].answered // 0' "$dir/posts.jsonl")
  lag=$(awk -v a="$applied" -v b="$t200" 'BEGIN { printf "%.3f", a - b }')
  echo "# figure: the check's 200 answer -> the NodePool's release applied: $lag s (load average $(cut -d' ' -f1 /proc/loadavg))"
  now_is "the check's yes lets the request through" "$REL1" get "$(np_path "$ns" np1)" .spec.release.image
  in_range "within $(real_s 1) s (real) of the answer" "$lag" 0 "$(real_s 1)"
  still_before a 2026-03-07T04:00:00Z "the pool's request let through"
  now_is "the request annotation is gone" "" \
    get "$(np_path "$ns" np1)" ".metadata.annotations[\"$CM/requested-nodepool-spec\"] // \"\""
  eventually "HyperShift writes the new template" 4.17.1 md_version "$md"
  now_is "one CheckFailed Event in all" 1 count_events "$ns" np1 CheckFailed

  # The HostedCluster's fields that roll every NodePool, asked for inside
  # their common window, wait for the checks the same way (the controller
  # asks about them as the control plane's change).
  printf '503\nCAB-78: not this one\n' >"$dir/answer"
  out=$(api PATCH "$(hc_path "$ns" hc6)" '{"spec": {"configuration": {"proxy": {"httpProxy": "http://proxy-2:3128"}}}}')
  check_eq "inside the window, a proxy change waits for the check: stored unchanged" none \
    "$(jq -r '.spec.configuration.proxy.httpProxy // "none"' <<<"$out")"
  check_contains "the request is recorded on the HostedCluster" "http://proxy-2:3128" \
    "$(jq -r --arg k "$CM/requested-hostedcluster-spec" '.metadata.annotations[$k] // ""' <<<"$out")"
  fields_asked() {
    jq -s --arg s "hostedclusters/$ns/hc6" \
      '[.[] | select(.body.subject == $s and (.body.data.change | startswith("fields that roll every NodePool")))] | length' \
      "$dir/posts.jsonl"
  }
  check "the check is asked about it at once" wait_for 5 eval '[ "$(fields_asked)" -ge 1 ]'
  echo "# figure: asked about the fields $(fields_asked) time(s) by now (refused: asked again with backoff)"
  eventually "a CheckFailed Event for the HostedCluster" 1 count_events "$ns" hc6 CheckFailed
  echo "# figure: asked about the fields $(fields_asked) time(s) once it was refused"
  now_is "the proxy is not applied while the check says no" none \
    get "$(hc_path "$ns" hc6)" '.spec.configuration.proxy.httpProxy // "none"'
  printf '200\nCAB-78 approved\n' >"$dir/answer"
  EVENTUALLY=70 eventually "the check's yes lets the proxy through" http://proxy-2:3128 \
    get "$(hc_path "$ns" hc6)" '.spec.configuration.proxy.httpProxy // "none"'
  still_before a 2026-03-07T04:00:00Z "the fields let through"
  recv_stop
}

after_metric() { metric a 'change_management_unhealthy_after_change_total\{kind="HostedCluster",system="control-plane"\}'; }
hc_cond_msg() { cond "$(hc_path "$1" "$2")" "$3" message; }

# The health after the change (DESIGN.md 3.15, seed 004): the release held
# on Friday evening goes at Saturday's window and HyperShift (the model)
# completes it two minutes later; the cluster turns Degraded five minutes
# after the completion. Inside the settle time (15m here) it is told once
# it has been Degraded for the grace time (5m here): the condition
# UnhealthyAfterChange, an Event, the metric and the notification
# `unhealthy-after-change` naming the release HyperShift completed and the
# condition, once; not before; nothing more by the settle time's end;
# healthy again, the condition turns False.
degraded_after_update_told() {
  local ns dir port done_at degr verdict told lag doc
  ns=$(new_ns aft) || return
  dir=$CTL_TMP/after${CTL_RERUN:+-r$CTL_RERUN}
  mkdir -p "$dir"
  port=$(free_port)
  cat >"$CTL_TMP/guard-after.yaml" <<YAML
afterChangeSettle: 15m
afterChangeGrace: 5m
notifications:
  endpoints: [{name: recv, url: "http://127.0.0.1:$port/hook"}]
checks:
  - {name: soak, url: "http://127.0.0.1:$port/post", steps: [post-change]}
YAML
  recv_start "$dir" "$port"
  local MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-after.yaml")
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 30m)" || return
  must mk_hc "$ns" hc4 policy=weekly || return
  must set_hc_health "$ns" hc4 True False || return
  # Ten simulated minutes (20 s real) before the window for the request:
  # on a loaded machine the controller and the model take seconds to start.
  model_scenario "$ns" 2026-03-06T23:50:00Z 30 hc4 --hc-status --controlplane-update-duration 2m ||
    { recv_stop; return; }
  eventually "HyperShift (model) reports the running release in status.version" "$REL0" \
    get "$(hc_path "$ns" hc4)" '.status.version.desired.image // ""'
  release_held "a release on Friday evening" "$(hc_path "$ns" hc4)" "$REL1" "$REL0"
  still_before a 2026-03-07T00:00:00Z "the release held"
  sleep_until_sim a 2026-03-07T00:00:00Z 1
  EVENTUALLY=20 eventually "HyperShift (model) completes the update" Completed \
    get "$(hc_path "$ns" hc4)" '.status.version.history[0].state'
  done_at=$(get "$(hc_path "$ns" hc4)" '.status.version.history[0].completionTime')
  degr=$(rfc3339 $(($(epoch "$done_at") + 300)))
  verdict=$(rfc3339 $(($(epoch "$done_at") + 600)))
  sleep_until_sim a "$degr" 0
  must set_hc_health "$ns" hc4 True True "$degr" || { recv_stop; return; }
  sleep_until_sim a "$(rfc3339 $(($(epoch "$verdict") - 90)))" 0
  now_is "Degraded for less than the grace time: no UnhealthyAfterChange condition" "" \
    cond "$(hc_path "$ns" hc4)" UnhealthyAfterChange status
  still_before a "$verdict" "the check before the grace time's end"
  EVENTUALLY=10 eventually "Degraded for the grace time: UnhealthyAfterChange True" True/Unhealthy \
    hc_cond_sr "$ns" hc4 UnhealthyAfterChange
  told=$(grep -m1 "UnhealthyAfterChange kind=HostedCluster namespace=$ns name=hc4" "${CTL_LOG[a]}" | awk '{ print $1 }')
  lag=$(awk -v t="$(secs "${told:-1970-01-01T00:00:00Z}")" -v b="$(ctl_real_at a "$verdict")" 'BEGIN { printf "%.3f", t - b }')
  echo "# figure: Degraded at completion + 5 min -> UnhealthyAfterChange told at completion + 10 min: $lag s (real) after that instant (load average $(cut -d' ' -f1 /proc/loadavg))"
  in_range "told within $(real_s 1) s (real) of the grace time's end, not before" "$lag" 0 "$(real_s 1)"
  check_eq "the condition names the release completed, when, the condition and since when" \
    "HyperShift completed release 4.17.1 at $done_at; since $degr Degraded is True (reason UnavailableReplicas), longer than the grace time (settle time 15m, grace time 5m)." \
    "$(hc_cond_msg "$ns" hc4 UnhealthyAfterChange)"
  now_is "its lastTransitionTime is the verdict's instant" "$verdict" \
    cond "$(hc_path "$ns" hc4)" UnhealthyAfterChange lastTransitionTime
  eventually "the companion's afterChange" "release 4.17.1/$done_at/$degr" \
    hc_cm "$ns" hc4 '.afterChange | "\(.change)/\(.completedAt)/\(.unhealthySince)"'
  # At the controller's (simulated) instant: the change is a day past its
  # settle time's end by the real clock, and no longer judged then.
  "$HCP_BIN" explain --kubeconfig "$KCFG" --at "$(rfc3339 "$(sim_lo a | cut -d. -f1)")" \
    hostedcluster "$ns/hc4" >"$CTL_TMP/explain-after" 2>&1
  # explain judges with the default times (30m, 10m), so its own line says
  # the change is still watched; the controller's line carries the verdict.
  check_contains "explain names the change completed" "release 4.17.1 completed at $done_at" \
    "$(cat "$CTL_TMP/explain-after")"
  check_contains "and repeats the controller's word" "UnhealthyAfterChange=True (Unhealthy)" \
    "$(cat "$CTL_TMP/explain-after")"
  eventually "an UnhealthyAfterChange Warning Event" 1 count_events "$ns" hc4 UnhealthyAfterChange
  eventually "change_management_unhealthy_after_change_total" 1 after_metric
  EVENTUALLY=10 eventually "the notification unhealthy-after-change" 1 step_count "$dir" unhealthy-after-change
  doc=$(step_doc "$dir" unhealthy-after-change)
  check_eq "it names the cluster, the release HyperShift completed and the change's completion" \
    "io.openshift.hypershift.changemanagement.unhealthy-after-change.v1 hostedclusters/$ns/hc4 release 4.17.1 $done_at" \
    "$(jq -r '"\(.type) \(.subject) \(.data.change) \(.data.window)"' <<<"$doc")"
  check_contains "its detail names the condition" "Degraded is True (reason UnavailableReplicas)" \
    "$(jq -r .data.detail <<<"$doc")"
  # The check that asks for post-change is told the verdict, once; the
  # notification endpoint is not (nor the check the notifications).
  EVENTUALLY=10 eventually "the post-change call to the check soak" 1 step_count "$dir" post-change
  doc=$(step_doc "$dir" post-change)
  check_eq "it says the verdict on the release HyperShift completed" \
    "io.openshift.hypershift.changemanagement.post-change.v1 release 4.17.1 $done_at Unhealthy" \
    "$(jq -r '"\(.type) \(.data.change) \(.data.window) \(.data.verdict)"' <<<"$doc")"
  # Still Degraded past the settle time's end: told once, nothing more.
  sleep_until_sim a "$(rfc3339 $(($(epoch "$done_at") + 900 + 60)))" 1
  now_is "told once: one notification" 1 step_count "$dir" unhealthy-after-change
  now_is "one post-change call" 1 step_count "$dir" post-change
  now_is "one Event" 1 count_events "$ns" hc4 UnhealthyAfterChange
  now_is "counted once" 1 after_metric
  now_is "one completed notification, none failed" "1 0" \
    bash -c "echo \$(cat '$dir'/*.json | jq -r .data.step | grep -c '^completed\$') \$(cat '$dir'/*.json | jq -r .data.step | grep -c '^failed\$')"
  # Healthy again: the condition turns False.
  must set_hc_health "$ns" hc4 True False || { recv_stop; return; }
  EVENTUALLY=10 eventually "healthy again: UnhealthyAfterChange False" False/AsExpected \
    hc_cond_sr "$ns" hc4 UnhealthyAfterChange
  eventually "and the companion's afterChange is gone" null hc_cm "$ns" hc4 .afterChange
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
if [ "${E_CAPI:-}" = 1 ]; then POOL_WAIT=40; fi
run_scenario unhealthy_cluster_skips_window
run_scenario pulled_release_held_at_window
run_scenario check_refuses_once
run_scenario pool_change_in_window_checked
# No machine in it: its clock need not run slower beside Cluster API.
CTL_SLOW_BASE=1 run_scenario degraded_after_update_told
summary
