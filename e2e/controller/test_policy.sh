#!/usr/bin/env bash
# Controller scenarios about policies that cannot be followed: a missing
# policy and an invalid one restrict changes (fail safe) with a condition
# that names the policy, and following it again once it is fixed; a freeze
# calendar (spec.exclusionCalendars) read from its labelled ConfigMap,
# followed as it changes, and holding when it is missing or unreadable.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"


# A HostedCluster following a policy that does not exist is restricted;
# creating the policy lets it follow it.
missing_policy_restricts() {
  local ns c md
  ns=$(new_ns missing) || return
  must mk_hc "$ns" hc1 policy=nowhere || return
  must mk_np "$ns" np1 hc1 || return
  c=$(cluster_path "$ns" hc1) md=$(md_path "$ns" hc1 np1)
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 || { not_ok "controller starts"; return; }
  eventually "Cluster paused with the marker" paused+marker pause_state "$c"
  eventually "MachineDeployment paused (its cluster is restricted)" paused+marker pause_state "$md"
  eventually "ChangesPaused=True (PolicyNotFound)" True/PolicyNotFound hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "the message names the policy" 'policy "nowhere" not found' \
    "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "status current reason PolicyNotFound" ChangesPaused/PolicyNotFound \
    cm_status "$ns" hostedcluster hc1 '.current | "\(.state)/\(.reason)"'
  now_is "metric next_change_eta -2 (error)" -2 obj_metric a change_management_next_change_eta HostedCluster hc1
  # The policy appears (Permissive): changes are permitted.
  must mk_policy "$ns" nowhere '{"strategy": "Permissive"}' || return
  eventually "Cluster unpaused once the policy exists" unpaused pause_state "$c"
  eventually "MachineDeployment unpaused" unpaused pause_state "$md"
  eventually "ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "metric policy_ready 1 for the new policy" 1 metric a "change_management_policy_ready\\{namespace=\"$ns\",policy=\"nowhere\"\\}"
}

# A policy the API server accepts but the controller cannot evaluate (COUNT is
# outside the supported rrule subset) is Ready=False and restricts its users.
invalid_policy_restricts() {
  local ns c p
  ns=$(new_ns invalid) || return
  must mk_policy "$ns" broken '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {
    "permit": {"rrule": "FREQ=DAILY;COUNT=3", "duration": "2h"}}}' || return
  must mk_hc "$ns" hc1 policy=broken || return
  c=$(cluster_path "$ns" hc1) p=$(hcmp_path "$ns" broken)
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 check "HCMP Ready=False" is_eq False cond "$p" Ready status
  check "HCMP Ready message explains (COUNT)" cond_has "$p" Ready COUNT
  eventually "Cluster paused with the marker" paused+marker pause_state "$c"
  eventually "ChangesPaused=True (PolicyNotReady)" True/PolicyNotReady hc_cond_sr "$ns" hc1 ChangesPaused
  local msg
  msg=$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)
  check_contains "the message names the policy" '"broken"' "$msg"
  check_contains "the message says why" COUNT "$msg"
  eventually "PolicyInvalid Event" 1 count_events "$ns" broken PolicyInvalid
  now_is "metric policy_ready 0" 0 metric a "change_management_policy_ready\\{namespace=\"$ns\",policy=\"broken\"\\}"
  # Fixing the policy lifts the restriction.
  must api PATCH "$p" '{"spec": {"maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "duration": null}}}}' || return
  EVENTUALLY=3 check "HCMP Ready=True once fixed" is_eq True cond "$p" Ready status
  eventually "Cluster unpaused (daily window all day)" unpaused pause_state "$c"
  eventually "ChangesPaused=False (ChangesPermitted)" False/ChangesPermitted hc_cond_sr "$ns" hc1 ChangesPaused
  eventually "metric policy_ready 1 once fixed" 1 metric a "change_management_policy_ready\\{namespace=\"$ns\",policy=\"broken\"\\}"
}

# cal_cm NS NAME ICS [LABELLED]: creates or replaces the labelled ConfigMap
# NAME holding ICS under freezes.ics (without the label when LABELLED=no).
cal_cm() {
  local labels='{"changemanagement.hypershift.openshift.io/exclusion-calendar": "true"}'
  [ "${4:-yes}" = no ] && labels='{}'
  local body
  body=$(jq -nc --arg n "$2" --arg t "$3" --argjson l "$labels" \
    '{apiVersion: "v1", kind: "ConfigMap", metadata: {name: $n, labels: $l}, data: {"freezes.ics": $t}}')
  if api GET "/api/v1/namespaces/$1/configmaps/$2" >/dev/null 2>&1; then
    api PUT "/api/v1/namespaces/$1/configmaps/$2" "$body" application/json >/dev/null
  else
    api POST "/api/v1/namespaces/$1/configmaps" "$body" application/json >/dev/null
  fi
}
# freeze_ics FROM UNTIL: a calendar of one all-day event "Holiday freeze".
freeze_ics() {
  printf 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//e2e//EN\r\nBEGIN:VEVENT\r\nUID:f1\r\nSUMMARY:Holiday freeze\r\nDTSTART;VALUE=DATE:%s\r\nDTEND;VALUE=DATE:%s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n' "$1" "$2"
}

# A Permissive policy with a freeze calendar: held while the calendar's
# ConfigMap is missing (NotFound), by the event while one covers now, let go
# the moment the event is moved (the ConfigMap is watched), held again when
# the label goes (unseen is missing) or the calendar cannot be read (the
# status names the line).
freeze_calendar_followed() {
  local ns c p
  ns=$(new_ns calendar) || return
  must mk_policy "$ns" freeze-aware '{"strategy": "Permissive",
    "exclusionCalendars": [{"name": "freezes"}]}' || return
  must mk_hc "$ns" hc1 policy=freeze-aware || return
  c=$(cluster_path "$ns" hc1) p=$(hcmp_path "$ns" freeze-aware)
  start_ctl a "$ns" 2026-12-10T12:00:00Z 1 || { not_ok "controller starts"; return; }
  eventually "CalendarsRead=False (NotFound) without the ConfigMap" False/NotFound \
    cond_sr "$p" CalendarsRead
  eventually "Cluster paused (fail safe)" paused+marker pause_state "$c"
  check_contains "the message names the ConfigMap" "ConfigMap $ns/freezes not found" \
    "$(cond "$p" CalendarsRead message)"
  must cal_cm "$ns" freezes "$(freeze_ics 20261209 20261212)" || return
  eventually "CalendarsRead=True once the labelled ConfigMap exists" True/Read cond_sr "$p" CalendarsRead
  eventually "ChangesPaused=True (Excluded): the event covers now" True/Excluded \
    hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "the condition names the event and its calendar" \
    "Holiday freeze (calendar freezes)" "$(cond "$(hc_path "$ns" hc1)" ChangesPaused message)"
  now_is "status: one event read" 1 get "$p" '.status.exclusionCalendars[0].events'
  # explain reads the calendar's ConfigMap too.
  local out
  out=$("$HCP_BIN" explain --kubeconfig "$KCFG" hostedcluster "$ns/hc1" --at 2026-12-10T12:00:00Z 2>&1)
  check_contains "explain names the event and its calendar" \
    'inside an exclusion of policy freeze-aware, reason: Holiday freeze (calendar freezes)' "$out"
  out=$("$HCP_BIN" explain --kubeconfig "$KCFG" hostedcluster "$ns/hc1" --at 2026-12-13T12:00:00Z 2>&1)
  check_contains "explain: permitted after the event (Permissive)" 'policy freeze-aware is Permissive' "$out"
  # The event moves to next week: changes are permitted at once.
  local t0
  t0=$(now_us)
  must cal_cm "$ns" freezes "$(freeze_ics 20261220 20261222)" || return
  EVENTUALLY=3 check "Cluster unpaused once the event moved" is_eq unpaused pause_state "$c"
  echo "# figure: calendar edited -> Cluster unpaused seen after $(( ($(now_us) - t0) / 1000 )) ms (polled)"
  eventually "ChangesPaused=False" False/ChangesPermitted hc_cond_sr "$ns" hc1 ChangesPaused
  # The label removed: the controller no longer sees it, which holds.
  must cal_cm "$ns" freezes "$(freeze_ics 20261220 20261222)" no || return
  eventually "unlabelled: CalendarsRead=False (NotFound)" False/NotFound cond_sr "$p" CalendarsRead
  eventually "Cluster paused again" paused+marker pause_state "$c"
  # Labelled again, with an event it cannot read: held, the line named.
  must cal_cm "$ns" freezes "$(printf 'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\nDTSTART;TZID=Mars/Base:20261220T000000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n')" || return
  eventually "unreadable: CalendarsRead=False (Unreadable)" False/Unreadable cond_sr "$p" CalendarsRead
  now_is "the status names line 2 of the calendar" 2 get "$p" '.status.exclusionCalendars[0].problems[0].line'
  now_is "Cluster still paused" paused+marker pause_state "$c"
}

begin_suite
run_scenario missing_policy_restricts
run_scenario invalid_policy_restricts
run_scenario freeze_calendar_followed
summary
