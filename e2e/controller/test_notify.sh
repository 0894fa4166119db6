#!/usr/bin/env bash
# Notifications (DESIGN.md 3.9) beside the HyperShift / Cluster API
# behaviour model, with the admission webhooks holding the release and a
# small HTTP receiver of the test's (python3 http.server, each POST body
# written to a file).
#
# The controller reads the `notifications` key of its --guard-config file:
# one CloudEvents endpoint at the receiver with a bearer token file. A
# release requested on Friday evening is held for the Saturday window while
# the receiver is down: the `held` notification fails, is tried again with
# backoff, and arrives once the receiver is up. At the window's opening the
# `initiated` notification arrives. Each is checked for the CloudEvents 1.0
# attributes (specversion, type, source, id, subject) and data naming the
# object; the token is sent as a bearer token and never logged; the metric
# counts sent and failed. A `notifications` key that does not parse stops
# the start naming the key. NodePools: who asked is recorded with the held
# request (requested-by/-at/-reason, the companion, the Event, the held
# notification); a Replace rollout HyperShift reports done (UpdatingVersion
# False, AsExpected) is notified `completed`, an in-place update it reports
# failed (InplaceUpgradeFailed) `failed`. 2026-03-07 is a Saturday.
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller
# and the model. CTL_E2E_ONLY="fn ..." runs only the named scenarios. On the
# "capi" instance (CTL_E2E_INSTANCE=capi, make e2e-capi) the NodePool
# scenario runs beside Cluster API's own controllers: its rollouts are
# real Machines replaced by Cluster API, and the other scenarios (no
# machine in them) run on "main" only.
# Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

WH_NAME=hcp-e2e-notify-$$
TOKEN=e2e-token-$$-secret

notif_metric() { metric a "hcp_controller_notifications_total\\{endpoint=\"recv\",result=\"$1\"\\}"; }

failed_seen() { local v; v=$(notif_metric failed); [ "${v:-0}" -ge 1 ] && echo yes || echo no; }
step_pair() { echo "$(step_count "$1" held) $(step_count "$1" initiated)"; }
step_field() { step_doc "$1" "$2" | jq -r "$3"; }

held_and_initiated_notified() {
  local ns dir port uid doc id f asked
  ns=$(new_ns notify) || return
  dir=$CTL_TMP/recv${CTL_RERUN:+-r$CTL_RERUN} # a run again starts with no deliveries
  mkdir -p "$dir"
  port=$(free_port)
  printf '%s\n' "$TOKEN" >"$CTL_TMP/token"
  cat >"$CTL_TMP/guard.yaml" <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: hcp-controller-guard}
data:
  notifications: |
    {"endpoints": [{"name": "recv", "url": "http://127.0.0.1:$port/hook",
                    "tokenFile": "$CTL_TMP/token"}], "leads": ["1m"]}
YAML
  MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard.yaml" -v 2)
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 10m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  # 10 simulated minutes before the window: 20 s real at 30x.
  model_scenario "$ns" 2026-03-06T23:50:00Z 30 hc1 --hc-status || return
  uid=$(get "$(hc_path "$ns" hc1)" .metadata.uid)
  # The receiver is down when the release is held.
  release_held "a release on Friday evening" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  eventually "a ChangeHeld Event" 1 count_events "$ns" hc1 ChangeHeld
  EVENTUALLY=10 eventually "the receiver down: the delivery fails and is counted" yes failed_seen
  now_is "nothing delivered while the receiver is down" 0 notif_metric sent
  sleep 3
  recv_start "$dir" "$port"
  EVENTUALLY=12 eventually "the held notification arrives once the receiver is up (retried)" 1 \
    step_count "$dir" held
  still_before a 2026-03-07T00:00:00Z "the held notification"
  doc=$(step_doc "$dir" held)
  check_eq "held: specversion 1.0" 1.0 "$(jq -r .specversion <<<"$doc")"
  check_eq "held: type" io.openshift.hypershift.changemanagement.held.v1 "$(jq -r .type <<<"$doc")"
  check_eq "held: source" "/hcp-controller/namespaces/$ns" "$(jq -r .source <<<"$doc")"
  check_eq "held: subject names the object" "hostedclusters/$ns/hc1" "$(jq -r .subject <<<"$doc")"
  check_eq "held: data names the object" "HostedCluster/$ns/hc1" \
    "$(jq -r '"\(.data.kind)/\(.data.namespace)/\(.data.name)"' <<<"$doc")"
  check_eq "held: data says what is held" "release $REL1" "$(jq -r .data.change <<<"$doc")"
  check_eq "held: held until the window" 2026-03-07T00:00:00Z "$(jq -r .data.until <<<"$doc")"
  id=$(jq -r .id <<<"$doc")
  check "held: an id of 32 hex digits" grep -Eq '^[0-9a-f]{32}$' <<<"$id"
  f=$(grep -l '"held"' "$dir"/*.json | head -1)
  check_eq "the bearer token is sent" "Bearer $TOKEN" "$(cat "${f%.json}.auth")"
  check_eq "the content type is CloudEvents structured" application/cloudevents+json \
    "$(cat "${f%.json}.ct")"
  now_is "the metric counts it sent" 1 notif_metric sent
  check "the token is never logged" bash -c "! grep -q '$TOKEN' '${CTL_LOG[a]}'"
  asked=$(jq -r .data.requestedAt <<<"$doc")
  check "held: data names when the request was recorded" \
    grep -Eq '^2026-03-06T23:5[0-9]:[0-9]{2}Z$' <<<"$asked"

  # A second request held for the same window (asked again before the
  # first ran): told held once more, its own id and time; initiated once,
  # for it.
  release_held "a second release for the same window" "$(hc_path "$ns" hc1)" "$REL2" "$REL0"
  EVENTUALLY=10 eventually "the second request's held notification" 2 step_count "$dir" held
  still_before a 2026-03-06T23:59:00Z "the second held notification"
  doc=$(cat "$dir"/*.json | jq -c 'select(.data.step == "held")' | jq -sc 'sort_by(.data.requestedAt) | last')
  check_eq "second held: data says what is held now" "release $REL2" "$(jq -r .data.change <<<"$doc")"
  check_eq "second held: the same window" 2026-03-07T00:00:00Z "$(jq -r .data.until <<<"$doc")"
  check "second held: a later request time" test "$(jq -r .data.requestedAt <<<"$doc")" \> "$asked"
  check "second held: its own id" test "$(jq -r .id <<<"$doc")" != "$id"

  sleep_until_sim a 2026-03-07T00:00:00Z 1
  EVENTUALLY=10 eventually "the initiated notification at the window's opening" 1 \
    step_count "$dir" initiated
  doc=$(step_doc "$dir" initiated)
  check_eq "initiated: type" io.openshift.hypershift.changemanagement.initiated.v1 \
    "$(jq -r .type <<<"$doc")"
  check_eq "initiated: data names the object" "HostedCluster/$ns/hc1" \
    "$(jq -r '"\(.data.kind)/\(.data.namespace)/\(.data.name)"' <<<"$doc")"
  check_eq "initiated: the window" 2026-03-07T00:00:00Z "$(jq -r .data.window <<<"$doc")"
  check "initiated: its id differs from held's" test "$(jq -r .id <<<"$doc")" != "$id"
  check_eq "initiated: the change let through is the second request's" "release $REL2" \
    "$(jq -r .data.change <<<"$doc")"
  eventually "the metric counts held (2), window-soon (1m) and initiated sent" 4 notif_metric sent
  sleep 1
  now_is "each step arrived once per request (held twice, initiated once)" "2 1" step_pair "$dir"
  : "$uid"
  recv_stop
}

# ctl_args NAME: the flags controller NAME was started with after the
# clock and ports (the webhooks and MODEL_CTL_ARGS), one a line.
ctl_args() { tr '\0' '\n' <"/proc/${CTL_PID[$1]}/cmdline" | sed '1,/^--health-probe-bind-address$/d' | sed 1d; }
# restart_ctl SIG: stops controller a with SIG and starts it again on the
# same simulated time line with the same flags.
restart_ctl() {
  local args now
  mapfile -t args < <(ctl_args a)
  stop_ctl a "$1"
  now=$(rfc3339 "$(sim_hi a | cut -d. -f1)")
  start_ctl a "$NS" "$now" 30 "${args[@]}"
}
ids_unique() { cat "$1"/*.json 2>/dev/null | jq -r .id | sort | uniq -d | wc -l; }
marks() { get "$(hc_path "$NS" hc1)" '.metadata.annotations["changemanagement.hypershift.openshift.io/notified"] // ""'; }
has_mark() { marks | grep -q "$1=" && echo yes || echo no; }

# Every step due at least once, none twice across controller restarts:
# held and window-soon (48h) delivered and marked; a restart sends neither
# again; window-soon (5m) due while the receiver is down, the controller
# killed with it pending and started again: it arrives once; initiated at
# the window, completed when HyperShift's history says Completed.
steps_survive_restarts() {
  local dir port
  NS=$(new_ns notifyr) || return
  dir=$CTL_TMP/recv2${CTL_RERUN:+-r$CTL_RERUN}
  mkdir -p "$dir"
  port=$(free_port)
  cat >"$CTL_TMP/guard2.yaml" <<YAML
notifications:
  endpoints: [{name: recv, url: "http://127.0.0.1:$port/hook"}]
  leads: ["48h", "5m"]
YAML
  MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard2.yaml" -v 2)
  must mk_policy "$NS" weekly "$(weekly_policy Saturday 00:00 30m)" || return
  must mk_hc "$NS" hc1 policy=weekly || return
  recv_start "$dir" "$port"
  model_scenario "$NS" 2026-03-06T23:50:00Z 30 hc1 --hc-status --controlplane-update-duration 10m ||
    { recv_stop; return; }
  release_held "a release on Friday evening" "$(hc_path "$NS" hc1)" "$REL1" "$REL0"
  eventually "held delivered" 1 step_count "$dir" held
  eventually "window-soon (48h) delivered" 1 step_count "$dir" window-soon
  eventually "the notified annotation marks held" yes has_mark held
  eventually "the notified annotation marks window-soon-48h" yes has_mark window-soon-48h
  restart_ctl TERM || { not_ok "the controller starts again"; return; }
  sleep 3
  now_is "after a restart: held not sent again" 1 step_count "$dir" held
  now_is "after a restart: window-soon not sent again" 1 step_count "$dir" window-soon
  still_before a 2026-03-06T23:55:00Z "the restart"
  recv_stop
  sleep_until_sim a 2026-03-06T23:55:00Z 2
  restart_ctl KILL || { not_ok "the controller starts again after a kill"; return; }
  # Up again only after the window opened, the controller sends no 5-minute
  # notice (the initiated step supersedes it, pkg/notify/due.c): the check
  # below needs the restart before the opening.
  still_before a 2026-03-07T00:00:00Z "the restart after the kill"
  recv_start "$dir" "$port"
  EVENTUALLY=15 eventually "window-soon (5m), pending at the kill, arrives after the restart" 2 \
    step_count "$dir" window-soon
  sleep_until_sim a 2026-03-07T00:00:00Z 1
  EVENTUALLY=15 eventually "initiated at the window" 1 step_count "$dir" initiated
  sleep_until_sim a 2026-03-07T00:10:00Z 1
  EVENTUALLY=20 eventually "completed when the history says Completed" 1 \
    step_count "$dir" completed
  eventually "the notified annotation marks completed" yes has_mark completed
  sleep 2
  now_is "no notification delivered twice" 0 ids_unique "$dir"
  now_is "each step once: held" 1 step_count "$dir" held
  now_is "each step once: initiated" 1 step_count "$dir" initiated
  recv_stop
}

# np_step_count DIR STEP NAME: CloudEvents received for NodePool NAME's STEP.
np_step_count() {
  cat "$1"/*.json 2>/dev/null |
    jq -r --arg s "$2" --arg n "$3" 'select(.data.step == $s and .data.kind == "NodePool" and .data.name == $n) | .id' |
    wc -l
}
np_step_doc() {
  cat "$1"/*.json 2>/dev/null |
    jq -c --arg s "$2" --arg n "$3" 'select(.data.step == $s and .data.kind == "NodePool" and .data.name == $n)' | head -1
}
# machines_up CPNS: "yes" once np1's and np2's two machines each are
# created (of np1's MachineDeployment, of np2's MachineSet), by the model's
# Cluster API half or by Cluster API (the model's record of its Machines).
machines_up() {
  [ "$(model_count machine-created "$1/np1")" -ge 2 ] && [ "$(model_count machine-created "$1/np2")" -ge 2 ] &&
    echo yes || echo no
}
# np_updating NS NAME: "status/reason" of the NodePool's UpdatingVersion.
np_updating() { echo "$(cond "$(np_path "$1" "$2")" UpdatingVersion status)/$(cond "$(np_path "$1" "$2")" UpdatingVersion reason)"; }
np_ann() { get "$(np_path "$1" "$2")" ".metadata.annotations[\"$CM/$3\"] // \"\""; }
# event_message NS OBJECT REASON: the message of the first such Event.
event_message() {
  api GET "/api/v1/namespaces/$1/events" 2>/dev/null |
    jq -r --arg o "$2" --arg r "$3" '[.items[] | select(.involvedObject.name == $o and .reason == $r) | .message][0] // ""'
}
# inplace_np NS NAME CLUSTER REPLICAS KEY=VALUE...: model_np with upgradeType InPlace.
inplace_np() {
  local ns=$1 name=$2 cluster=$3 replicas=$4
  shift 4
  api POST "$HS/namespaces/$ns/nodepools" "$(jq -nc --arg n "$name" --arg c "$cluster" \
    --arg img "$REL0" --argjson r "$replicas" --argjson a "$(annotations_json "$@")" '{
    apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
    metadata: {name: $n, annotations: $a},
    spec: {clusterName: $c, replicas: $r, management: {upgradeType: "InPlace"},
           release: {image: $img}}}')" application/json >/dev/null
}
# np_rolled_out NS NAME: the status HyperShift reports for a pool that has
# run 4.17.0 for weeks: status.version and UpdatingVersion False AsExpected
# since January (conditions.go, updatingVersionCondition), so that only a
# rollout of this scenario can complete.
np_rolled_out() {
  api PATCH "$(np_path "$1" "$2")/status" '{"status": {"version": "4.17.0", "conditions": [
    {"type": "UpdatingVersion", "status": "False", "reason": "AsExpected", "message": "",
     "lastTransitionTime": "2026-01-05T00:00:00Z", "observedGeneration": 1}]}}' >/dev/null
}
# np_request NS NAME IMAGE REASON: a release for the NodePool with the
# writer's reason annotation (DESIGN.md 3.11), as OCM would write it;
# prints the object as admitted.
np_request() {
  api PATCH "$(np_path "$1" "$2")" "$(jq -nc --arg i "$3" --arg r "$4" --arg k "$CM/reason" \
    '{metadata: {annotations: {($k): $r}}, spec: {release: {image: $i}}}')"
}

# NodePools held at the NodePool, who asked recorded (requested-by, -at,
# -reason on the pool, its companion's audit.heldRequest, the ChangeHeld
# Event, the held notification), let through at the window; HyperShift (the
# model, --nodepool-updating-version) reports np1's Replace rollout done
# (UpdatingVersion False, reason AsExpected): a `completed` notification;
# np2's in-place update fails (--fail-inplace: a degraded node, UpdatingVersion
# False, reason InplaceUpgradeFailed, inplace.go): a `failed` notification.
# Each once.
nodepool_outcomes_notified() {
  local ns dir port out by at doc
  ns=$(new_ns notifynp) || return
  dir=$CTL_TMP/recv3${CTL_RERUN:+-r$CTL_RERUN}
  mkdir -p "$dir"
  port=$(free_port)
  cat >"$CTL_TMP/guard3.yaml" <<YAML
notifications:
  endpoints: [{name: recv, url: "http://127.0.0.1:$port/hook"}]
YAML
  MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard3.yaml" -v 2)
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 1h)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must model_np "$ns" np1 hc1 2 policy=weekly || return
  must inplace_np "$ns" np2 hc1 2 policy=weekly || return
  must np_rolled_out "$ns" np1 || return
  must np_rolled_out "$ns" np2 || return
  recv_start "$dir" "$port"
  model_scenario "$ns" 2026-03-06T23:50:00Z 30 hc1 --nodepool-updating-version \
    --fail-inplace "$ns/np2" --replacement-duration 2m || return
  EVENTUALLY=$MACHINES_WAIT eventually "np1's and np2's machines are created" yes machines_up "$ns-hc1"
  now_is "np1 rolled out: UpdatingVersion False (AsExpected)" False/AsExpected np_updating "$ns" np1

  out=$(np_request "$ns" np1 "$REL1" "CVE-2026-1234 fix")
  check_eq "np1's release held at the NodePool" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
  by=$(np_ann "$ns" np1 requested-by)
  at=$(np_ann "$ns" np1 requested-at)
  check "the held NodePool request records who made it (userInfo.username)" \
    test -n "$by" -a "$by" != unknown
  check "... and when (before the window, on the controller's clock)" \
    bash -c "[[ '$at' == 2026-03-06T23:5* ]]"
  check_eq "... and the reason given" "CVE-2026-1234 fix" "$(np_ann "$ns" np1 requested-reason)"
  check_eq "nothing else of userInfo is recorded: no annotation of ours but the stanza, the request, its record and the notified marks" \
    "" "$(get "$(np_path "$ns" np1)" '.metadata.annotations // {} | keys
      | map(select(startswith("changemanagement.hypershift.openshift.io/")))
      | map(select(. as $k | ["policy", "reason", "requested-at", "requested-by", "requested-reason",
          "requested-nodepool-spec", "notified"] | map("changemanagement.hypershift.openshift.io/" + .) | index($k) | not))
      | join(" ")')"
  eventually "the NodePool's companion names the requester" "$by" np_cm "$ns" np1 .audit.heldRequest.by
  now_is "... and the reason" "CVE-2026-1234 fix" np_cm "$ns" np1 .audit.heldRequest.reason
  eventually "a ChangeHeld Event for the NodePool" 1 count_events "$ns" np1 ChangeHeld
  check_contains "the Event names who, when and why" \
    "A change requested by $by at $at (reason: CVE-2026-1234 fix) is held until the window at 2026-03-07T00:00:00Z" \
    "$(event_message "$ns" np1 ChangeHeld)"
  eventually "the held notification for np1" 1 np_step_count "$dir" held np1
  check_contains "the held notification says who asked" "Requested by $by at $at (reason: CVE-2026-1234 fix)" \
    "$(np_step_doc "$dir" held np1 | jq -r .data.detail)"
  out=$(np_request "$ns" np2 "$REL1" "driver update")
  check_eq "np2's release held at the NodePool" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
  check_eq "np2's request records its requester" "$by" "$(np_ann "$ns" np2 requested-by)"
  still_before a 2026-03-07T00:00:00Z "the NodePool requests"

  sleep_until_sim a 2026-03-07T00:00:00Z 1
  EVENTUALLY=10 eventually "np1 let through at the window (initiated)" 1 np_step_count "$dir" initiated np1
  EVENTUALLY=10 eventually "np2 let through at the window (initiated)" 1 np_step_count "$dir" initiated np2
  # np1: two machines replaced, 2 simulated minutes each (8 s real at 30x)
  # beside the model, about 15 s real each beside Cluster API.
  # Both at once: before HyperShift (the model) starts the rollout, the
  # pool still says False/AsExpected of the version before (a busy machine
  # reads that first).
  np_done_at() { echo "$(np_updating "$1" "$2") $(get "$(np_path "$1" "$2")" .status.version)"; }
  EVENTUALLY=$ROLLED_WAIT eventually "np1's rollout done: UpdatingVersion False (AsExpected), at 4.17.1" \
    "False/AsExpected 4.17.1" np_done_at "$ns" np1
  now_is "np1 runs 4.17.1 (status.version)" 4.17.1 get "$(np_path "$ns" np1)" .status.version
  EVENTUALLY=10 eventually "a completed notification for np1" 1 np_step_count "$dir" completed np1
  doc=$(np_step_doc "$dir" completed np1)
  check_eq "completed: type" io.openshift.hypershift.changemanagement.completed.v1 "$(jq -r .type <<<"$doc")"
  check_eq "completed: subject names the NodePool" "nodepools/$ns/np1" "$(jq -r .subject <<<"$doc")"
  EVENTUALLY=20 eventually "np2's in-place update failed: UpdatingVersion False (InplaceUpgradeFailed)" \
    False/InplaceUpgradeFailed np_updating "$ns" np2
  EVENTUALLY=10 eventually "a failed notification for np2" 1 np_step_count "$dir" failed np2
  doc=$(np_step_doc "$dir" failed np2)
  check_eq "failed: type" io.openshift.hypershift.changemanagement.failed.v1 "$(jq -r .type <<<"$doc")"
  check_contains "failed: the reason HyperShift gave" "InplaceUpgradeFailed" "$(jq -r .data.detail <<<"$doc")"
  sleep 2
  check_eq "np1: completed once, never failed" "1 0" \
    "$(np_step_count "$dir" completed np1) $(np_step_count "$dir" failed np1)"
  check_eq "np2: failed once, never completed" "1 0" \
    "$(np_step_count "$dir" failed np2) $(np_step_count "$dir" completed np2)"
  now_is "no notification delivered twice" 0 ids_unique "$dir"
  recv_stop
}

# A change held longer than the guard rails' holdAgeWarning (1h here, at
# 300x: 12 s real) is told once (decide/aging.h): a HoldAging Warning Event
# naming the age, the warning and the next window, the hold-aging
# notification whose window is the request's time plus the warning, the age
# as a metric beside the warning; at the window it is let through and the
# age's series goes.
# aging_told NS DIR: "EVENTS NOTIFICATIONS" of hc1's hold aging.
aging_told() { echo "$(count_events "$1" hc1 HoldAging) $(step_count "$2" hold-aging)"; }
hold_aging_told() {
  local ns dir port doc asked due at
  ns=$(new_ns aging) || return
  dir=$CTL_TMP/recv3${CTL_RERUN:+-r$CTL_RERUN}
  mkdir -p "$dir"
  port=$(free_port)
  cat >"$CTL_TMP/guard3.yaml" <<YAML
holdAgeWarning: 1h
notifications:
  endpoints: [{name: recv, url: "http://127.0.0.1:$port/hook"}]
  leads: ["5m"]
YAML
  MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard3.yaml" -v 2)
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 10m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  recv_start "$dir" "$port"
  # 2 h 10 min before the window: 26 s real at 300x.
  model_scenario "$ns" 2026-03-06T21:50:00Z 300 hc1 --hc-status || { recv_stop; return; }
  release_held "a release on Friday evening" "$(hc_path "$ns" hc1)" "$REL1" "$REL0"
  eventually "held delivered" 1 step_count "$dir" held
  asked=$(step_field "$dir" held .data.requestedAt)
  now_is "not aging before the warning" 0 count_events "$ns" hc1 HoldAging
  now_is "the warning in force is a metric" 3600 metric a change_management_hold_age_warning_seconds
  check "the held change's age is a metric" test -n "$(obj_metric a change_management_held_change_age_seconds HostedCluster hc1)"
  EVENTUALLY=20 eventually "a HoldAging Event once held for an hour" 1 count_events "$ns" hc1 HoldAging
  still_before a 2026-03-07T00:00:00Z "the HoldAging Event"
  check_contains "the Event names the change, the warning and the next window" \
    "longer than the guard rails' holdAgeWarning (1h): the next window opens at 2026-03-07T00:00:00Z" \
    "$(event_message "$ns" hc1 HoldAging)"
  check_contains "the Event names the request's time" "(requested at $asked)" \
    "$(event_message "$ns" hc1 HoldAging)"
  EVENTUALLY=10 eventually "the hold-aging notification" 1 step_count "$dir" hold-aging
  doc=$(step_doc "$dir" hold-aging)
  check_eq "hold-aging: type" io.openshift.hypershift.changemanagement.hold-aging.v1 \
    "$(jq -r .type <<<"$doc")"
  check_eq "hold-aging: the request it is about" "$asked" "$(jq -r .data.requestedAt <<<"$doc")"
  due=$(rfc3339 $(($(epoch "$asked") + 3600)))
  check_eq "hold-aging: its occasion is the request's time plus holdAgeWarning" "$due" \
    "$(jq -r .data.window <<<"$doc")"
  check_eq "hold-aging: held until the window" 2026-03-07T00:00:00Z "$(jq -r .data.until <<<"$doc")"
  at=$(jq -r .time <<<"$doc")
  check "hold-aging: told within 5 s real (1500 simulated) of its occasion ($at, due $due)" \
    test "$(($(epoch "$at") - $(epoch "$due")))" -ge 0 -a "$(($(epoch "$at") - $(epoch "$due")))" -le 1500
  check "the age metric passed the warning" \
    awk -v a="$(obj_metric a change_management_held_change_age_seconds HostedCluster hc1)" 'BEGIN { exit !(a >= 3600) }'
  now_is "counted once" 1 metric a 'change_management_hold_aging_total\{kind="HostedCluster",system="control-plane"\}'
  sleep_until_sim a 2026-03-07T00:00:00Z 1
  EVENTUALLY=10 eventually "let through at the window" 1 step_count "$dir" initiated
  EVENTUALLY=5 eventually "nothing held: no age series" "" obj_metric a change_management_held_change_age_seconds HostedCluster hc1
  now_is "told once: one Event, one notification" "1 1" aging_told "$ns" "$dir"
  recv_stop
}

bad_notifications_stop_the_start() {
  local out rc
  printf '%s\n' 'notifications:' '  endpoints:' '    - name: ops' '      url: ftp://x' \
    >"$CTL_TMP/bad.yaml"
  out=$(timeout 20 "$HCP_BIN" run --kubeconfig "$KCFG" --guard-config "$CTL_TMP/bad.yaml" \
    --webhook-bind-address 127.0.0.1:0 --webhook-cert-file "$CERT" --webhook-key-file "$KEY" \
    --metrics-bind-address 0 --health-probe-bind-address 0 2>&1)
  rc=$?
  check "a bad notifications key stops the start" test "$rc" -ne 0 -a "$rc" -ne 124
  check_contains "the error names the key" "notifications.endpoints[0].url" "$out"
  # The pre-start checks live in the same file (DESIGN.md 3.15).
  printf '%s\n' 'checks:' '  - name: cab' '    url: https://cab.example.com' '    lead: 8d' \
    >"$CTL_TMP/bad-checks.yaml"
  out=$(timeout 20 "$HCP_BIN" run --kubeconfig "$KCFG" --guard-config "$CTL_TMP/bad-checks.yaml" \
    --webhook-bind-address 127.0.0.1:0 --webhook-cert-file "$CERT" --webhook-key-file "$KEY" \
    --metrics-bind-address 0 --health-probe-bind-address 0 2>&1)
  rc=$?
  check "a bad checks key stops the start" test "$rc" -ne 0 -a "$rc" -ne 124
  check_contains "the error names the key" "checks[0].lead: must be from 0s to 604800s" "$out"
}

model_suite_begin
trap 'recv_stop; watch_stop; webhook_scenario_cleanup' EXIT
# Real seconds for the NodePool scenario's machines to be created, and for
# np1's rollout to end (E_CAPI is read by model_suite_begin).
MACHINES_WAIT=10 ROLLED_WAIT=30
if [ "${E_CAPI:-}" = 1 ]; then MACHINES_WAIT=40 ROLLED_WAIT=90; fi
# The scenario with machines runs beside Cluster API's own controllers on the
# "capi" instance (make e2e-capi), the others on "main" (make
# e2e-controller): neither runs the other's, unless CTL_E2E_ONLY names it.
MACHINE_SCENARIOS="nodepool_outcomes_notified"
OTHER_SCENARIOS="held_and_initiated_notified steps_survive_restarts hold_aging_told bad_notifications_stop_the_start"
if [ -n "${CTL_E2E_ONLY:-}" ]; then
  scenarios="$OTHER_SCENARIOS $MACHINE_SCENARIOS"
elif [ "${E_CAPI:-}" = 1 ]; then
  scenarios=$MACHINE_SCENARIOS
else
  scenarios=$OTHER_SCENARIOS
fi
for s in $scenarios; do run_scenario "$s"; done
summary
