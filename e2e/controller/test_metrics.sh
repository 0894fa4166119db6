#!/usr/bin/env bash
# Controller scenario about /metrics: the per-object change management gauges
# are computed at scrape time from the simulated clock, for a known state
# before and inside a window, and for the constant strategies.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

# scrape NAME: the metrics now, in $CTL_TMP/scrape, with the simulated-clock
# bounds around the scrape in SCRAPE_LO / SCRAPE_HI.
scrape() {
  SCRAPE_LO=$(sim_lo "$1")
  metrics "$1" >"$CTL_TMP/scrape"
  SCRAPE_HI=$(sim_hi "$1")
}
# scraped METRIC KIND OBJECT [EXTRA-LABELS]: a value from the last scrape.
scraped() {
  RE="^$1\\{kind=\"$2\",namespace=\"[^\"]*\",object=\"$3\",system=\"[^\"]*\"${4:-}\\}\$" \
    awk '!/^#/ { if ($1 ~ ENVIRON["RE"]) { print $2; exit } }' "$CTL_TMP/scrape"
}
# Seconds from the scrape to an instant, as LO HI bounds (1 s slack for
# rounding).
until_bounds() {
  awk -v x="$(epoch "$1")" -v lo="$SCRAPE_LO" -v hi="$SCRAPE_HI" 'BEGIN { printf "%.3f %.3f", x - hi - 1, x - lo + 1 }'
}
since_bounds() {
  awk -v x="$(epoch "$1")" -v lo="$SCRAPE_LO" -v hi="$SCRAPE_HI" 'BEGIN { printf "%.3f %.3f", lo - x - 1, hi - x + 1 }'
}

metric_values_at_scrape() {
  local ns r
  ns=$(new_ns metrics) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 10m)" || return
  # hc1: ByPolicy with a release update pending (spec.release differs from
  # status.version.desired); np1: its own policy, a version update pending.
  must mk_hc "$ns" hc1 policy=weekly || return
  must set_hc_history "$ns" hc1 Completed quay.io/openshift-release-dev/ocp-release:4.16.9-x86_64 || return
  must mk_np "$ns" np1 hc1 policy=weekly || return
  must api PATCH "$(np_path "$ns" np1)/status" '{"status": {"conditions": [{"type": "UpdatingVersion",
    "status": "True", "reason": "AsExpected", "message": "Updating version", "lastTransitionTime": "2026-03-01T00:00:00Z"}]}}' || return
  must mk_hc "$ns" hc2 strategy=Restrictive || return
  must mk_hc "$ns" hc3 || return
  must mk_hc "$ns" hc4 policy=nowhere || return
  start_ctl a "$ns" 2026-03-06T23:50:00Z 120 || { not_ok "controller starts"; return; }
  EVENTUALLY=3 eventually "converged (hc1 ChangesPending=True)" True cond "$(hc_path "$ns" hc1)" ChangesPending status

  scrape a
  still_before a 2026-03-07T00:00:00Z "the scrape"
  if command -v promtool >/dev/null; then
    if promtool check metrics <"$CTL_TMP/scrape" >"$CTL_TMP/promtool" 2>&1; then
      ok "/metrics passes promtool check metrics"
    else
      not_ok "/metrics passes promtool check metrics" "$(head -5 "$CTL_TMP/promtool" | tr '\n' ' ')"
    fi
  fi
  # shellcheck disable=SC2046
  in_range "hc1 next_change_eta counts down to 00:00" "$(scraped change_management_next_change_eta HostedCluster hc1)" \
    $(until_bounds 2026-03-07T00:00:00Z)
  check_eq "hc1 permissive_remaining 0 (not permitted)" 0 "$(scraped change_management_permissive_remaining HostedCluster hc1)"
  # shellcheck disable=SC2046
  in_range "hc1 last_change counts from the last window's end" "$(scraped change_management_last_change HostedCluster hc1)" \
    $(since_bounds 2026-02-28T00:10:00Z)
  check_eq "hc1 change_pending 2 (blocked)" 2 "$(scraped change_management_change_pending HostedCluster hc1)"
  check_eq "hc1 (ByPolicy) strategy_enabled{MaintenanceSchedule} 1" 1 \
    "$(scraped change_management_strategy_enabled HostedCluster hc1 ',strategy="MaintenanceSchedule"')"
  check_eq "hc1 strategy_enabled{Permissive} 0" 0 "$(scraped change_management_strategy_enabled HostedCluster hc1 ',strategy="Permissive"')"
  check_eq "hc1 strategy_enabled{Restrictive} 0" 0 "$(scraped change_management_strategy_enabled HostedCluster hc1 ',strategy="Restrictive"')"
  check_eq "hc1 has no strategy_enabled{ByPolicy} (not an enhancement label)" "" \
    "$(scraped change_management_strategy_enabled HostedCluster hc1 ',strategy="ByPolicy"')"
  check_eq "hc1 stanza_strategy{ByPolicy} 1" 1 "$(scraped change_management_stanza_strategy HostedCluster hc1 ',strategy="ByPolicy"')"
  # shellcheck disable=SC2046
  in_range "np1 next_change_eta counts down to 00:00" "$(scraped change_management_next_change_eta NodePool np1)" \
    $(until_bounds 2026-03-07T00:00:00Z)
  check_eq "np1 change_pending 2 (update blocked)" 2 "$(scraped change_management_change_pending NodePool np1)"
  check_eq "hc2 (Restrictive) next_change_eta -1" -1 "$(scraped change_management_next_change_eta HostedCluster hc2)"
  check_eq "hc2 (Restrictive) permissive_remaining 0" 0 "$(scraped change_management_permissive_remaining HostedCluster hc2)"
  check_eq "hc2 (Restrictive) strategy_enabled{Restrictive} 1" 1 \
    "$(scraped change_management_strategy_enabled HostedCluster hc2 ',strategy="Restrictive"')"
  check_eq "hc2 stanza_strategy{Restrictive} 1" 1 "$(scraped change_management_stanza_strategy HostedCluster hc2 ',strategy="Restrictive"')"
  check_eq "hc3 (no stanza) strategy_enabled{Permissive} 1" 1 \
    "$(scraped change_management_strategy_enabled HostedCluster hc3 ',strategy="Permissive"')"
  check_eq "hc3 stanza_strategy{None} 1" 1 "$(scraped change_management_stanza_strategy HostedCluster hc3 ',strategy="None"')"
  check_eq "hc4 (missing policy) strategy_enabled{Restrictive} 1 (fail safe)" 1 \
    "$(scraped change_management_strategy_enabled HostedCluster hc4 ',strategy="Restrictive"')"
  check_eq "hc3 (no stanza) next_change_eta 0" 0 "$(scraped change_management_next_change_eta HostedCluster hc3)"
  check_eq "hc3 (no stanza) permissive_remaining -1" -1 "$(scraped change_management_permissive_remaining HostedCluster hc3)"
  check_eq "hc3 (no stanza) last_change 0" 0 "$(scraped change_management_last_change HostedCluster hc3)"
  check_eq "hc4 (missing policy) next_change_eta -2" -2 "$(scraped change_management_next_change_eta HostedCluster hc4)"
  check_eq "hc4 (missing policy) permissive_remaining -2" -2 "$(scraped change_management_permissive_remaining HostedCluster hc4)"

  # A second scrape a little later: computed at scrape time, not cached.
  sleep 1
  r=$(scraped change_management_next_change_eta HostedCluster hc1)
  scrape a
  still_before a 2026-03-07T00:00:00Z "the second scrape"
  # shellcheck disable=SC2046
  in_range "hc1 next_change_eta a second later" "$(scraped change_management_next_change_eta HostedCluster hc1)" \
    $(until_bounds 2026-03-07T00:00:00Z)
  check "the eta went down between scrapes" lt "$(scraped change_management_next_change_eta HostedCluster hc1)" "$r"

  # Inside the window (00:00-00:10).
  sleep_until_sim a 2026-03-07T00:00:00Z 0.5
  scrape a
  still_before a 2026-03-07T00:10:00Z "the in-window scrape"
  check_eq "hc1 next_change_eta 0 in the window" 0 "$(scraped change_management_next_change_eta HostedCluster hc1)"
  # shellcheck disable=SC2046
  in_range "hc1 permissive_remaining counts down to 00:10" \
    "$(scraped change_management_permissive_remaining HostedCluster hc1)" $(until_bounds 2026-03-07T00:10:00Z)
  check_eq "hc1 last_change 0 in the window" 0 "$(scraped change_management_last_change HostedCluster hc1)"
  check_eq "hc1 change_pending 1 (being initiated)" 1 "$(scraped change_management_change_pending HostedCluster hc1)"
  check_eq "np1 change_pending 1 (being initiated)" 1 "$(scraped change_management_change_pending NodePool np1)"
  # shellcheck disable=SC2046
  in_range "np1 permissive_remaining counts down to 00:10" \
    "$(scraped change_management_permissive_remaining NodePool np1)" $(until_bounds 2026-03-07T00:10:00Z)
}

begin_suite
run_scenario metric_values_at_scrape
summary
