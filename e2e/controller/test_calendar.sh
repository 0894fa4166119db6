#!/usr/bin/env bash
# Controller scenario about the calendar feed on the metrics port:
# /calendar/<namespace>.ics and /calendar/<namespace>/<hostedcluster>.ics,
# read with an independent iCalendar parser (Debian's python3-icalendar),
# hold exactly the windows `hcp-controller preview` computes from the same
# policies: each HostedCluster's (300 random policies) and its NodePool's
# intersection with it, with the policies' exclusions and their reasons.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CAL_E2E_POLICIES sets the number of policies (default 300).
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
COMPARE=$CTL_E2E_DIR/ics_compare.py
N=${CAL_E2E_POLICIES:-300}
NP_EVERY=10 # every tenth HostedCluster has a NodePool with the next policy
# Windows start and end on quarter hours; the controller's clock starts at
# FROM and runs on while the test reads the feeds (well under 14 minutes), so
# both ends of the feed's range stay between the same quarter hours.
FROM=2026-11-23T09:31:00Z
UNTIL=2027-02-21T09:31:00Z # FROM + 90 days, the feed's range

calendar() { curl -s --max-time 20 -o "$2" -w '%{http_code}' "http://127.0.0.1:${CTL_MPORT[a]}$1"; }

feed_equals_preview() {
  local ns dir=$CTL_TMP/cal i j q code out list=$CTL_TMP/cal.list
  ns=$(new_ns cal) || return
  mkdir -p "$dir"
  "$PY" "$COMPARE" generate "$dir" "$N" 1515 || { not_ok "setup: policies"; return; }
  # One List of the policies, HostedClusters and NodePools, created at once.
  "$PY" "$COMPARE" objects "$dir" "$N" "$ns" "$NP_EVERY" >"$CTL_TMP/objects.json" ||
    { not_ok "setup: objects"; return; }
  if ! k create -f "$CTL_TMP/objects.json" >"$CTL_TMP/create.log" 2>&1; then
    not_ok "setup: create $N policies and HostedClusters" "$(grep -v created "$CTL_TMP/create.log" | head -3)"
    return
  fi
  start_ctl a "$ns" "$FROM" 1 || { not_ok "controller starts"; return; }
  code=$(calendar "/calendar/$ns.ics" "$CTL_TMP/ns.ics")
  check_eq "GET /calendar/$ns.ics answers 200" 200 "$code"
  code=$(calendar "/calendar/$ns/hc000.ics" "$CTL_TMP/hc.ics")
  check_eq "GET /calendar/$ns/hc000.ics answers 200" 200 "$code"

  # What preview says of each timeline, from the same files.
  : >"$list"
  for ((i = 0; i < N; i++)); do
    j=$(printf %03d "$i")
    "$HCP_BIN" preview -f "$dir/p$j.json" --from "$FROM" --count 100 -o json >"$dir/hc$j.json"
    echo "$ns/hc$j control plane|$dir/hc$j.json|$dir/p$j.json" >>"$list"
    if ((i % NP_EVERY == 0)); then
      q=$(printf %03d $(((i + 1) % N)))
      "$HCP_BIN" preview -f "$dir/p$j.json" -f "$dir/p$q.json" --from "$FROM" --count 100 \
        -o json >"$dir/np$j.json"
      echo "$ns/np$j worker nodes (HostedCluster hc$j)|$dir/np$j.json|$dir/p$q.json,$dir/p$j.json" >>"$list"
    fi
  done
  out=$("$PY" "$COMPARE" compare-feed "$CTL_TMP/ns.ics" "$list" "$FROM" "$UNTIL" 2>&1)
  check "the namespace feed equals preview: ${out##*$'\n'}" \
    grep -q "^$((N + N / NP_EVERY)) timelines, [1-9][0-9]* events, 0 differences\$" <<<"$out"
  [[ "$out" == *" 0 differences" ]] || echo "$out" | head -5 | sed 's/^/#   /'

  # One HostedCluster's feed: its control plane and its NodePool only.
  grep -E "^$ns/hc000 control plane\||^$ns/np000 " "$list" >"$CTL_TMP/hc.list"
  out=$("$PY" "$COMPARE" compare-feed "$CTL_TMP/hc.ics" "$CTL_TMP/hc.list" "$FROM" "$UNTIL" 2>&1)
  check "the HostedCluster feed equals preview: ${out##*$'\n'}" \
    grep -q "^2 timelines, [0-9]* events, 0 differences\$" <<<"$out"
  check_eq "a HostedCluster not in the cache: 404" 404 "$(calendar "/calendar/$ns/nothere.ics" "$CTL_TMP/x")"
  check_eq "a path that names no feed: 404" 404 "$(calendar "/calendar/$ns" "$CTL_TMP/x")"
  check_contains "Content-Type text/calendar" "text/calendar; charset=utf-8" \
    "$(curl -sI "http://127.0.0.1:${CTL_MPORT[a]}/calendar/$ns.ics")"
}

begin_suite
if ! "$PY" -c 'import icalendar' 2>/dev/null; then
  echo "python3-icalendar is missing (scripts/install-deps.sh installs it)"
  echo "0 passed, 1 failed"
  exit 1
fi
run_scenario feed_equals_preview
summary
