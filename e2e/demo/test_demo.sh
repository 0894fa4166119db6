#!/usr/bin/env bash
# End-to-end check of the demo (e2e/demo/demo.sh): the simulated week in
# DEMO_SECONDS=25 real seconds, in a namespace of its own.
#
# Checks the transitions it printed against the windows worked out by hand
# from the sample policies (e2e/demo/objects/), object by object: times,
# paused/unpaused, nothing missing, nothing extra; the exclusion, the
# PermissiveUntil expiry, the NodePool intersections and the pending update
# in their messages; the final table; the CAPI objects and Events in the
# cluster; the controller's log. Then runs the demo again (which must reset
# the objects it left) and stops it with SIGTERM mid-week: the controller
# and the watches must be gone.
#
# Needs the "main" instance (e2e/cluster.sh up main) and the controller
# binary (HCP_BIN, default build/hcp-controller). Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/../controller/lib.sh"

DEMO=$CTL_REPO/e2e/demo/demo.sh
NS=demo-e2e
export DEMO_NAMESPACE=$NS HCP_BIN

begin_suite
demo_pid=""
stop_demo() { [ -z "$demo_pid" ] || { kill -TERM "$demo_pid" 2>/dev/null; wait "$demo_pid" 2>/dev/null; }; }
trap 'stop_demo; cleanup_all' EXIT

# ---- a full run -------------------------------------------------------------------

OUT=$CTL_TMP/demo.out
t0=$(now_us)
DEMO_SECONDS=25 DEMO_DIR=$CTL_TMP/run1 "$DEMO" >"$OUT" 2>&1
rc=$?
took=$((($(now_us) - t0) / 1000))
echo "# demo run: exit $rc in $took ms"
check_eq "demo exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/#   /' "$OUT" | tail -30

# The transition lines: WHEN (26 characters), KIND, NAME, CHANGES, MESSAGE.
TRANSITIONS=$CTL_TMP/transitions
sed -n '/^-- transitions/,/^-- state at the end/p' "$OUT" |
  grep -E '^[A-Z][a-z]{2} 2026-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}' >"$TRANSITIONS"

# seq_of KIND NAME: "Day HH:MM state" of each line about the object, in
# order ("start" for the state at the start of the week).
seq_of() {
  awk -v k="$1" -v n="$2" '{
      rest = substr($0, 29); split(rest, f, " +")
      if (f[1] != k || f[2] != n) next
      when = (substr($0, 22, 5) == "start") ? "start" : substr($0, 1, 3) " " substr($0, 16, 5)
      out = out (out ? ", " : "") when " " f[3]
    } END { print out }' "$TRANSITIONS"
}
# line_of KIND NAME DAY HH:MM: the message part of that object's line then.
line_of() {
  awk -v k="$1" -v n="$2" -v d="$3" -v t="$4" '{
      rest = substr($0, 29); split(rest, f, " +")
      if (f[1] != k || f[2] != n || substr($0, 1, 3) != d) next
      if (t == "start" ? substr($0, 22, 5) == "start" : substr($0, 16, 5) == t && substr($0, 22, 5) != "start") print
    }' "$TRANSITIONS"
}

# Worked out from the policies: weeknights is Mon-Thu 21:00-03:00 UTC with
# Wednesday (Zurich) 2026-03-03T23:00Z-2026-03-04T23:00Z excluded;
# weekend-nights Sat and Sun 01:00-05:00; first-saturday 2026-03-07
# 02:00-04:00; staging is permitted until Tuesday 12:00, then weeknights.
WEEKNIGHTS="start PAUSED, Mon 21:00 unpaused, Tue 03:00 PAUSED, Tue 21:00 unpaused, Tue 23:00 PAUSED, Wed 23:00 unpaused, Thu 03:00 PAUSED, Thu 21:00 unpaused, Fri 03:00 PAUSED"
STAGING="start unpaused, Tue 12:00 PAUSED, Tue 21:00 unpaused, Tue 23:00 PAUSED, Wed 23:00 unpaused, Thu 03:00 PAUSED, Thu 21:00 unpaused, Fri 03:00 PAUSED"
WEEKEND="start PAUSED, Sat 01:00 unpaused, Sat 05:00 PAUSED, Sun 01:00 unpaused, Sun 05:00 PAUSED"
FIRST_SAT="start PAUSED, Sat 02:00 unpaused, Sat 04:00 PAUSED"

check_eq "policy weeknights transitions" "$WEEKNIGHTS" "$(seq_of Policy weeknights)"
check_eq "policy weekend-nights transitions" "$WEEKEND" "$(seq_of Policy weekend-nights)"
check_eq "policy first-saturday transitions" "$FIRST_SAT" "$(seq_of Policy first-saturday)"
check_eq "HostedCluster staging (PermissiveUntil, then weeknights)" "$STAGING" "$(seq_of HostedCluster staging)"
check_eq "NodePool staging-workers (weeknights)" "$WEEKNIGHTS" "$(seq_of NodePool staging-workers)"
check_eq "NodePool staging-gpu (no stanza: follows staging)" "$STAGING" "$(seq_of NodePool staging-gpu)"
check_eq "HostedCluster prod (weekend-nights)" "$WEEKEND" "$(seq_of HostedCluster prod)"
check_eq "NodePool prod-infra (weekend-nights, annotation form)" "$WEEKEND" "$(seq_of NodePool prod-infra)"
check_eq "NodePool prod-workers (first-saturday within weekend-nights)" "$FIRST_SAT" \
  "$(seq_of NodePool prod-workers)"
expected_lines=$(echo "$WEEKNIGHTS, $WEEKEND, $FIRST_SAT, $STAGING, $WEEKNIGHTS, $STAGING, $WEEKEND, $WEEKEND, $FIRST_SAT" |
  tr ',' '\n' | wc -l)
check_eq "no other transition lines" "$expected_lines" "$(wc -l <"$TRANSITIONS")"

# Printed as they happen: in order of simulated time.
check "transitions printed in simulated-time order" \
  cmp -s "$TRANSITIONS" <(sort -s -k2,3 "$TRANSITIONS")

check_contains "the exclusion's reason when it cuts Tuesday night" "Excluded: quarter-end close" \
  "$(line_of Policy weeknights Tue 23:00)"
check_contains "staging starts under its override" "permitted until 2026-03-03T12:00:00Z, then policy" \
  "$(line_of HostedCluster staging Mon start)"
check_contains "staging-gpu held by its HostedCluster after the override" "its HostedCluster's does not" \
  "$(line_of NodePool staging-gpu Tue 12:00)"
check_contains "prod's pending update blocked at the start" "Pending changes: ChangesBlocked" \
  "$(line_of HostedCluster prod Mon start)"
check_contains "prod's pending update initiated when its window opens" "Pending changes: ChangesInitiated" \
  "$(line_of HostedCluster prod Sat 01:00)"
check_contains "prod-workers waits for the next first Saturday" "paused until 2026-04-04T02:00:00Z" \
  "$(line_of NodePool prod-workers Sat 04:00)"

# ---- the table --------------------------------------------------------------------

TABLE=$CTL_TMP/table
sed -n '/^-- state at the end/,/^$/p' "$OUT" >"$TABLE"
row() { grep -cE "^$1 +$NS/$2 +$3 +restricted +yes +$4 +$5 " "$TABLE"; }
check_eq "table lists 6 objects" 6 "$(grep -cE "^(HostedCluster|NodePool) +$NS/" "$TABLE")"
check_eq "table: prod" 1 "$(row HostedCluster prod ByPolicy "Cluster prod-4xk2p" "Sat 2026-03-14 01:00 - 05:00")"
check_eq "table: staging" 1 \
  "$(row HostedCluster staging PermissiveUntil "Cluster staging-9qm7d" "Mon 2026-03-09 21:00 - 03:00")"
check_eq "table: prod-workers" 1 \
  "$(row NodePool prod-workers ByPolicy "MachineDeployment prod-workers" "Sat 2026-04-04 02:00 - 04:00")"
check_eq "table: prod-infra" 1 \
  "$(row NodePool prod-infra ByPolicy "MachineDeployment prod-infra" "Sat 2026-03-14 01:00 - 05:00")"
check_eq "table: staging-workers" 1 \
  "$(row NodePool staging-workers ByPolicy "MachineDeployment staging-workers" "Mon 2026-03-09 21:00 - 03:00")"
check_eq "table: staging-gpu (InPlace: MachineSet)" 1 \
  "$(row NodePool staging-gpu None "MachineSet staging-gpu" "Mon 2026-03-09 21:00 - 03:00")"

# ---- the cluster ----------------------------------------------------------------------

capi() { echo "/apis/cluster.x-k8s.io/v1beta1/namespaces/$NS-$1/$2/$3"; }
now_is "Cluster prod paused by the controller" paused+marker pause_state "$(capi prod clusters prod-4xk2p)"
now_is "Cluster staging paused by the controller" paused+marker \
  pause_state "$(capi staging clusters staging-9qm7d)"
now_is "MachineDeployment prod-workers paused" paused+marker \
  pause_state "$(capi prod machinedeployments prod-workers)"
now_is "MachineSet staging-gpu paused" paused+marker pause_state "$(capi staging machinesets staging-gpu)"
count_reason() { events "$NS" "$1" | grep -c "^$2\$"; }
now_is "Events: staging-workers opened 4 windows" 4 count_reason staging-workers WindowOpened
now_is "Events: staging closed 4 times" 4 count_reason staging WindowClosed
now_is "Events: prod-workers opened 1 window" 1 count_reason prod-workers WindowOpened
now_is "Events: prod's update initiated twice" 2 count_reason prod ChangesInitiated
check_contains "summary counts the Events" "ChangesInitiated 2, WindowClosed 17, WindowOpened 15" \
  "$(grep '^-- Events by hcp-controller' "$OUT")"

log=$(sed -n 's/^-- controller log: //p' "$OUT")
check_eq "the controller's log is where the demo says" "$CTL_TMP/run1/controller.log" "$log"
WHY="no 'hcp-controller stopped' line in $log" check "the controller stopped cleanly" \
  grep -q "hcp-controller stopped" "$log"
pid=$(cat "$CTL_TMP/run1/controller.pid" 2>/dev/null)
check "the controller is gone after the demo" test -n "$pid" -a ! -d "/proc/$pid"

# ---- a rerun, stopped mid-week ------------------------------------------------------

OUT2=$CTL_TMP/demo2.out
DEMO_SECONDS=25 DEMO_DIR=$CTL_TMP/run2 "$DEMO" >"$OUT2" 2>&1 &
demo_pid=$!
seen_monday_night() { grep -q '^Mon 2026-03-02 21:00 .* staging-workers ' "$OUT2"; }
if wait_for 30 seen_monday_night; then
  ok "the rerun reaches Monday night"
else
  not_ok "the rerun reaches Monday night" "$(tail -5 "$OUT2" | tr '\n' '|')"
fi
check_contains "the rerun starts from fresh objects" \
  "Changes are paused until 2026-03-07T01:00:00Z (following policy \"weekend-nights\"). Pending changes: ChangesBlocked." \
  "$(grep '^Mon 2026-03-02 00:00 start  HostedCluster prod ' "$OUT2")"
pid=$(cat "$CTL_TMP/run2/controller.pid" 2>/dev/null)
pgid=$(cat "$CTL_TMP/run2/watch.pgid" 2>/dev/null)
kill -TERM "$demo_pid"
wait "$demo_pid"
check_eq "SIGTERM stops the demo with status 143" 143 "$?"
demo_pid=""
gone() { [ ! -d "/proc/$pid" ] && ! pgrep -g "$pgid" >/dev/null; }
check "the controller and the watches are gone" test -n "$pid" -a -n "$pgid"
WHY="controller $pid or process group $pgid still running" check "... within 3 s" wait_for 3 gone

summary
