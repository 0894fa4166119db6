#!/usr/bin/env bash
# The change-management enhancement's own API examples (its
# HostedChangeManagementPolicy and MaintenanceSchedule sections, with the
# placeholders filled in): each is applied with kubectl to the real API
# server as written, the controller computes its status, and `hcp-controller
# preview` of the same document agrees with that status (the state now, and
# the next transition).
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

START=2026-03-04T12:00:00Z # a Wednesday, noon

# NAME SPEC-JSON, one per line: the examples.
examples() {
  cat <<'EOF'
permissive {"strategy": "Permissive"}
restrictive {"strategy": "Restrictive"}
schedule-without-stanza {"strategy": "MaintenanceSchedule"}
every-5th-day {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Daily", "daily": {"interval": 5}}}}}
weekly-mon-tue-wed {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Weekly", "weekly": {"daysOfWeek": ["Monday", "Tuesday", "Wednesday"], "interval": 1}}}}}
saturday-8pm-8h {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Weekly", "weekly": {"daysOfWeek": ["Saturday"]}}, "startTime": "20:00", "duration": "8h"}}}
go-duration {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Weekly", "weekly": {"daysOfWeek": ["Saturday"]}}, "startTime": "20:00", "duration": "8h0m0s"}}}
monthly-by-date {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Monthly", "monthly": {"by": "Date", "date": {"datesOfMonth": [1, 15], "interval": 2}}}}}}
monthly-by-day {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Monthly", "monthly": {"by": "Day", "day": {"days": [{"weekOfMonth": "Last", "dayOfWeek": "Sunday"}], "interval": 1}}}, "startTime": "02:00", "duration": "4h"}}}
yearly-by-date {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Yearly", "yearly": {"by": "Date", "date": {"datesOfMonth": [29], "month": "February"}}}}}}
yearly-by-day {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Yearly", "yearly": {"by": "Day", "day": {"days": [{"weekOfMonth": "First", "dayOfWeek": "Monday"}], "month": "September"}}}}}}
null-start-and-duration {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Daily", "daily": {"interval": 2}}, "startTime": null, "duration": null}}}
null-recurrence {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": null, "startTime": "22:00", "duration": "2h"}, "exclude": [{"fromDate": "2026-03-04", "untilDate": "2026-03-06", "reason": "release freeze"}]}}
exclude-only {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"exclude": [{"fromDate": "2026-03-10", "untilDate": null, "reason": "Optional human readable"}]}}
permit-and-exclude {"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Weekly", "weekly": {"daysOfWeek": ["Wednesday"]}}}, "exclude": [{"fromDate": "2026-03-04", "reason": "a holiday"}]}}
EOF
}

# agree NS NAME: the policy's status and preview of the stored object agree.
agree() {
  local ns=$1 name=$2 p st pv
  p=$(hcmp_path "$ns" "$name")
  st=$(api GET "$p") || { echo "cannot read"; return; }
  api GET "$p" | jq '{apiVersion, kind, metadata: {name: .metadata.name, namespace: .metadata.namespace}, spec}' \
    >"$CTL_TMP/$name.json"
  pv=$("$HCP_BIN" preview -f "$CTL_TMP/$name.json" --from "$(date -u -d "@$(sim_lo a | cut -d. -f1)" +%Y-%m-%dT%H:%M:%SZ)" --count 1 -o json 2>&1) ||
    { echo "preview: $pv"; return; }
  jq -nr --argjson s "$st" --argjson v "$pv" '
    ($s.status.behavior) as $b | ($v.windows[0] // null) as $w |
    if $b == null then "no status.behavior"
    elif $b.current.state == "ChangesUnpaused" then
      (if $w != null and $w.end == $b.current.endTime then "agree"
       else "current ends \($b.current.endTime), preview window \($w)" end)
    else
      (if ($w == null and ($b.next == null or $b.next.state == null)) or
          ($w != null and $b.next != null and $w.start == $b.next.startTime and $w.end == $b.next.endTime)
       then "agree" else "next \($b.next), preview window \($w)" end)
    end'
}

enhancement_examples() {
  local ns name spec out
  ns=$(new_ns enh) || return
  while read -r name spec; do
    jq -n --arg n "$name" --arg ns "$ns" --argjson s "$spec" '{apiVersion: "changemanagement.hypershift.openshift.io/v1alpha1",
      kind: "HostedChangeManagementPolicy", metadata: {name: $n, namespace: $ns}, spec: $s}' >"$CTL_TMP/in-$name.json"
    if out=$(k apply -f "$CTL_TMP/in-$name.json" 2>&1); then
      ok "$name: applied as written"
    else
      not_ok "$name: applied as written" "$out"
    fi
  done < <(examples)
  start_ctl a "$ns" "$START" 1 || { not_ok "controller starts"; return; }
  while read -r name spec; do
    EVENTUALLY=5 eventually "$name: Ready=True" True cond "$(hcmp_path "$ns" "$name")" Ready status
    eventually "$name: status and preview agree" agree agree "$ns" "$name"
  done < <(examples)
}

begin_suite
run_scenario enhancement_examples
summary
