#!/usr/bin/env bash
# `hcp-controller explain` against the real API server: what governs a
# HostedCluster or a NodePool (stanza, policy, permitted now and why: a
# window, an exclusion with its reason, an override with its expiry, the
# HostedCluster constraining a NodePool), the change held, the next windows,
# -o json, and the documented exit statuses for a missing object, a missing
# policy and missing access.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

# explain ARGS...: runs explain with the admin kubeconfig; stdout in $out,
# stderr in $err, status in $rc.
explain() {
  "$HCP_BIN" explain --kubeconfig "${EXPLAIN_KUBECONFIG:-$KCFG}" "$@" >"$CTL_TMP/out" 2>"$CTL_TMP/err"
  rc=$?
  out=$(cat "$CTL_TMP/out")
  err=$(cat "$CTL_TMP/err")
}

WEEKEND='{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"timeZone": "Europe/Berlin",
  "permit": {"recurrence": {"frequency": "Weekly", "weekly": {"daysOfWeek": ["Saturday", "Sunday"]}},
             "startTime": "02:00", "duration": "6h"},
  "exclude": [{"fromDate": "2026-12-19", "untilDate": "2027-01-04", "reason": "Year-end freeze"}]}}'
SUNDAYS='{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"timeZone": "Europe/Berlin",
  "permit": {"rrule": "FREQ=WEEKLY;BYDAY=SU", "startTime": "04:00", "duration": "8h"}}}'

explain_objects() {
  local ns
  ns=$(new_ns explain) || return
  must mk_policy "$ns" weekend "$WEEKEND" || return
  must mk_policy "$ns" sundays "$SUNDAYS" || return
  must mk_hc "$ns" prod policy=weekend || return
  must set_hc_history "$ns" prod Completed quay.io/openshift-release-dev/ocp-release:4.16.9-x86_64 || return
  must mk_np "$ns" workers prod policy=sundays || return
  must mk_hc "$ns" forced strategy=PermissiveUntil permissive-until=2026-12-27T00:00:00Z policy=weekend || return
  must mk_hc "$ns" orphan policy=gone || return

  # The minimum time left: the effective start, and none in the last 2h.
  must mk_policy "$ns" weekendmin "$(jq -c '. + {minTimeLeft: {controlPlane: "2h"}}' <<<"$WEEKEND")" || return
  must mk_hc "$ns" prodmin policy=weekendmin || return
  explain hostedcluster "$ns/prodmin" --at 2026-11-25T10:00:00Z
  check_contains "minTimeLeft: the window's open and its last start" \
    "Start:      window opens 2026-11-28T01:00:00Z, changes may start until 2026-11-28T05:00:00Z (min time left 2h)" "$out"
  explain hostedcluster "$ns/prodmin" --at 2026-11-28T05:30:00Z
  check_contains "minTimeLeft: permitted, but less than the minimum left" \
    "Start:      no change may start now: less than 2h is left in this window; next start 2026-11-29T01:00:00Z (window opens 2026-11-29T01:00:00Z, changes may start until 2026-11-29T05:00:00Z)" "$out"
  explain hostedcluster "$ns/prodmin" --at 2026-11-28T05:00:00Z -o json
  check_eq "minTimeLeft: exactly the minimum left starts now (-o json)" "7200|2026-11-28T05:00:00Z|2026-11-28T05:00:00Z|false" \
    "$(jq -r '.minTimeLeft | [.seconds, .effectiveStart, .lastStart, .tail] | join("|")' <<<"$out")"
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:00Z -o json
  check_eq "no minimum: minTimeLeft null" null "$(jq -c .minTimeLeft <<<"$out")"

  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:00Z
  check_eq "outside a window: exit 0" 0 "$rc"
  check_contains "the stanza" "Stanza:     ByPolicy, policy weekend (from annotations)" "$out"
  check_contains "the policy" "Policy:     $ns/weekend: MaintenanceSchedule, time zone Europe/Berlin, Ready" "$out"
  check_contains "not permitted, outside the windows" \
    "changes are NOT permitted: outside the windows of policy weekend" "$out"
  check_contains "the next window (Saturday 02:00 Berlin)" "a window opens 2026-11-28T01:00:00Z (in 2d 15h)" "$out"
  check_contains "the held release" "release quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64 requested, quay.io/openshift-release-dev/ocp-release:4.16.9-x86_64 running: held until changes are permitted" "$out"
  check_contains "the next windows" "2. 2026-11-29T01:00:00Z - 2026-11-29T07:00:00Z  (6h)" "$out"
  check "no request recorded: no age is told" test "${out/Held since:/}" = "$out"
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:00Z -o json
  check_eq "-o json: no request recorded, heldSince and heldForSeconds null" "null|null" \
    "$(jq -r '[.heldSince, .heldForSeconds] | map(tostring) | join("|")' <<<"$out")"
  # The request as the admission webhook records it: how long it has waited.
  must k annotate hostedcluster -n "$ns" prod --overwrite \
    changemanagement.hypershift.openshift.io/requested-release-image=quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64 \
    changemanagement.hypershift.openshift.io/requested-at=2026-11-21T08:00:00Z || return
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:00Z
  check_contains "the held change's age, from its recorded request" \
    "Held since: 2026-11-21T08:00:00Z (4d 2h), the request as the admission webhook recorded it" "$out"
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:00Z -o json
  check_eq "-o json: heldSince and heldForSeconds" "2026-11-21T08:00:00Z|352800" \
    "$(jq -r '[.heldSince, .heldForSeconds] | join("|")' <<<"$out")"

  explain hostedcluster "$ns/prod" --at 2026-12-26T03:00:00Z -o json --count 1
  check_eq "-o json: exit 0" 0 "$rc"
  check_eq "-o json: an exclusion and its reason" \
    'false|inside an exclusion of policy weekend, reason: Year-end freeze|2027-01-09T01:00:00Z|1' \
    "$(jq -r '[.permitted, .why, .nextWindowStart, (.windows | length)] | join("|")' <<<"$out")"

  explain hostedcluster "$ns/forced" --at 2026-12-26T03:00:00Z
  check_contains "an override and its expiry" \
    "changes are permitted: a PermissiveUntil override permits changes until 2026-12-27T00:00:00Z (in 21h)" "$out"

  explain nodepool "$ns/workers" --at 2026-12-27T03:00:00Z
  check_contains "the HostedCluster constrains the NodePool" \
    "its own schedule permits changes (inside a window of policy sundays), but HostedCluster $ns/prod constrains it: inside an exclusion of policy weekend, reason: Year-end freeze" "$out"
  check_contains "the intersection's next window" "1. 2027-01-10T03:00:00Z - 2027-01-10T07:00:00Z  (4h)" "$out"
  explain nodepool "$ns/workers" --at 2026-11-29T05:00:00Z -o json
  check_eq "a NodePool inside both windows: permitted until the cluster's end" "true|2026-11-29T07:00:00Z|prod" \
    "$(jq -r '[.permitted, .until, .hostedCluster.name] | join("|")' <<<"$out")"

  explain hostedcluster "$ns/orphan" --at 2026-11-25T10:00:00Z
  check_eq "a missing policy: exit 2" 2 "$rc"
  check_contains "a missing policy is explained" "policy gone does not exist in $ns: changes are held" "$out"
  explain hostedcluster "$ns/nothere"
  check_eq "a missing object: exit 2" 2 "$rc"
  check_contains "a missing object: the message" "HostedCluster $ns/nothere not found" "$err"
  EXPLAIN_KUBECONFIG=$E_KUBECONFIG_NOPERM explain hostedcluster "$ns/prod"
  check_eq "no access: exit 1" 1 "$rc"
  check_contains "no access: the message" "no access to HostedCluster $ns/prod (HTTP 403 Forbidden)" "$err"
  explain hostedcluster "$ns"
  check_eq "bad usage: exit 2" 2 "$rc"
}

# What the controller recorded (the HostedChangeManagementStatus) beside the
# explanation: nothing before it ran; its state, held change and history once
# it has; and a "Differs:" line when the record disagrees with the answer at
# an instant its current state covers (here: an override the stopped
# controller has not acted on).
explain_recorded() {
  local ns
  ns=$(new_ns explrec) || return
  must mk_policy "$ns" weekend "$WEEKEND" || return
  must mk_hc "$ns" prod policy=weekend || return
  must set_hc_history "$ns" prod Completed quay.io/openshift-release-dev/ocp-release:4.16.9-x86_64 || return
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:00Z
  check_contains "no controller yet: nothing recorded" \
    "Recorded:   no HostedChangeManagementStatus hostedcluster.prod: the controller has not recorded this object" "$out"
  start_ctl a "$ns" 2026-11-25T10:00:00Z 1 || { not_ok "controller starts"; return; }
  EVENTUALLY=10 eventually "the controller recorded the HostedCluster" ChangesPaused \
    get "$(hcms_path "$ns" hostedcluster prod)" .status.behavior.current.state
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:30Z
  check_eq "recorded: exit 0" 0 "$rc"
  check_contains "recorded: the state since the last window, until the next" \
    "Recorded:   HostedChangeManagementStatus hostedcluster.prod: ChangesPaused since 2026-11-22T07:00:00Z, until 2026-11-28T01:00:00Z; strategy in force MaintenanceSchedule" "$out"
  check_contains "recorded: the held change" " held since 2026-11-25T10:00" "$out"
  check_contains "recorded: the history" "History:    ChangesPaused 2026-11-22T07:00:00Z - ongoing (MaintenanceSchedule)" "$out"
  check "recorded: agrees with the explanation" test "${out/Differs:/}" = "$out"
  stop_ctl a
  must k annotate hostedcluster -n "$ns" prod --overwrite \
    changemanagement.hypershift.openshift.io/strategy=PermissiveUntil \
    changemanagement.hypershift.openshift.io/permissive-until=2026-11-26T00:00:00Z || return
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:30Z -o json
  check_eq "an override the stopped controller has not acted on: the record differs" \
    "true|true|ChangesPaused|true" \
    "$(jq -r '[.permitted, .recorded.found, .recorded.status.behavior.current.state, .recorded.differs] | join("|")' <<<"$out")"
  explain hostedcluster "$ns/prod" --at 2026-11-25T10:00:30Z
  check_contains "the Differs line" \
    "Differs:    the controller's record says ChangesPaused but changes are permitted now" "$out"
}

# The release waves (DESIGN.md 3.14) are the controller's configuration:
# explain shows its record of them, who the held release waits on, and what
# an override let a change past.
explain_waves() {
  local ns rel=quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64
  ns=$(new_ns explwave) || return
  cat >"$CTL_TMP/waves.yaml" <<YAML
waves:
  sequence:
    - name: canary
      selector: {matchLabels: {fleet.example.com/wave: canary}}
    - name: early
      selector: {matchLabels: {fleet.example.com/wave: early}}
      soak: 48h
YAML
  must mk_policy "$ns" weekend "$WEEKEND" || return
  must mk_hc "$ns" canary policy=weekend || return
  must mk_hc "$ns" early policy=weekend \
    requested-release-image="$rel" || return
  must k label hostedcluster -n "$ns" canary fleet.example.com/wave=canary || return
  must k label hostedcluster -n "$ns" early fleet.example.com/wave=early || return
  mk_webhook_cert
  # The guard rails are the webhooks' configuration; no webhook
  # configuration names these, so nothing is sent to them.
  start_ctl a "$ns" 2026-11-25T10:00:00Z 1 --guard-config "$CTL_TMP/waves.yaml" \
    --webhook-bind-address 127.0.0.1:0 --webhook-cert-file "$CERT" --webhook-key-file "$KEY" ||
    { not_ok "controller starts"; return; }
  EVENTUALLY=10 eventually "the controller recorded the waves' verdict" WaitingForSoak \
    get "$(hcms_path "$ns" hostedcluster early)" .status.wave.state
  explain hostedcluster "$ns/early" --at 2026-11-25T10:00:30Z
  check_contains "the waves: who the held release waits on" \
    "Waves:      wave early: WaitingForSoak: wave early waits for wave canary: 4.18.1 completed on 0 of the 1 clusters it needs (not yet on $ns/canary)" "$out"
  explain hostedcluster "$ns/canary" --at 2026-11-25T10:00:30Z
  check "the first wave waits on nobody" test "${out/Waves:/}" = "$out"
  # An override in force lets the release past the waves, and the write
  # that lets it through records that (the record of who set the override
  # is the admission webhook's, written here by hand).
  must k annotate hostedcluster -n "$ns" early --overwrite \
    "$CM/strategy=PermissiveUntil" "$CM/permissive-until=2026-11-26T00:00:00Z" \
    "$CM/override-by=sre" "$CM/override-at=2026-11-25T10:00:10Z" || return
  EVENTUALLY=10 eventually "the override lets the release through" "$rel" \
    get "$(hc_path "$ns" early)" .spec.release.image
  check_eq "the record names the override and the waves" \
    "2026-11-25T10:00:10Z release waves: wave early waits for wave canary: 4.18.1 completed on 0 of the 1 clusters it needs (not yet on $ns/canary)" \
    "$(get "$(hc_path "$ns" early)" ".metadata.annotations[\"$CM/override-skipped\"]")"
  EVENTUALLY=10 eventually "the companion's audit says the soak was skipped" \
    "release waves: wave early waits for wave canary: 4.18.1 completed on 0 of the 1 clusters it needs (not yet on $ns/canary)" \
    get "$(hcms_path "$ns" hostedcluster early)" .status.audit.override.skipped
  explain hostedcluster "$ns/early" --at 2026-11-25T10:01:00Z
  check_contains "explain: what the override skipped" \
    "Skipped:    the override let a change past release waves: wave early waits for wave canary" "$out"
  stop_ctl a
}

begin_suite
run_scenario explain_objects
run_scenario explain_recorded
run_scenario explain_waves
summary
