#!/usr/bin/env bash
# End-to-end figures of the holds (issue 12), with the HyperShift / Cluster
# API behaviour model (e2e/model) beside the controller and the real API
# server calling the chart's webhooks (objectSelector on the opted-in label,
# failurePolicy Fail). Prints every figure as "# figure: ..." and checks it.
# `make test` runs it on the "capi" instance (make e2e-capi): there Cluster
# API's own controllers make the MachineSets and Machines, and only the
# model's HyperShift half acts (e2e/README.md, "Real Cluster API").
#
# FIG_HCS HostedClusters (default 12), each with a Replace and an InPlace
# NodePool of one machine, follow policies of their own: a daily 3 h window
# (6 h on "capi"),
# the k-th cluster's starting at 02:00 + k hours (UTC), so that openings come
# one cluster at a time. The simulated clock runs FIG_SCALE (default 1200)
# times real time from Sunday 2026-03-01 18:00 to Wednesday 16:30 (on "capi"
# from 00:00 to 19:30): three
# windows per object, six window boundaries, 216 boundaries with 12
# clusters. Before Monday's, Tuesday's and Wednesday's windows, while every
# object is restricted, each HostedCluster and NodePool is given a new
# release (three held changes per object).
#
#   1. Initiations outside a permitted window: every initiation the model
#      records is inside its object's window: control-plane initiations,
#      machine replacements (Replace) and in-place targets (InPlace); every
#      machine replacement and in-place update starts at most 1 s (real)
#      after a close (the pause's latency).
#   2. Window open to initiation, real time: the controller's first log line
#      of the opening (the held change released, or WindowOpened) to the
#      first initiation of the object after it (the control plane's, a
#      Replace pool's new MachineSet, an InPlace pool's first in-place
#      update), and to a Replace pool's first new Machine;
#      p50, p99 and max over every object and window (target p99 <= 1 s,
#      reported with the load average; the check is at most 5 s).
#   3. Writes while held: from just before Tuesday's change is requested
#      (and held) to before Tuesday's first window opens (restricted, a
#      change held on every object), the updates of each object by writers
#      other than the model and this test's request (the controller: at
#      most 3), and the model's own writes: the request is held at the
#      NodePool, so HyperShift has no new template or target to write (no
#      event, no loop).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

N=${FIG_HCS:-12}
SCALE=${FIG_SCALE:-1200}
SIM0=2026-03-01T18:00:00Z # Sunday evening
WH_NAME=hcp-e2e-figures-$$
REL=quay.io/openshift-release-dev/ocp-release:4.17
STRETCH_TO=2026-03-03T01:20:00Z # Tuesday: before the first window opens

# Real seconds for the model and Cluster API to create every pool's machine.
FLEET_WAIT=30

webhook_scenario_begin
# (the instance's environment, E_CAPI, is read by webhook_scenario_begin)
# Beside Cluster API's own controllers the fleet's 24 machines take about
# 40 s (real) to come up, longer than Sunday's restricted hours before
# Monday's first window: the clock starts at Sunday 00:00 instead, and the
# first request waits for Sunday's last close once they are up. A
# one-machine replacement there takes about 13 s (real) from the opening
# (Cluster API's pace, e2e/README.md), longer than a 3 h window (9 s): the
# windows are 6 h (18 s), so that it ends inside its window, as a real one
# ends well inside a real window. (With 3 h the close cut every rollout, it
# ended at the next opening, and only then did maxSurge 1 let the next
# change's first Machine start, 7-9 s after the opening.)
# A first new Machine comes at most MACHINE_MAX s (real) after its opening:
# on "capi" Cluster API's pace, slower on a loaded machine (6.7 s seen at
# load average 3.7; test_capi.sh allows 8 s too).
WIN_H=3 MACHINE_MAX=5
if [ "${E_CAPI:-}" = 1 ]; then SIM0=2026-03-01T00:00:00Z FLEET_WAIT=60 WIN_H=6 MACHINE_MAX=8; fi
WIN_S=$((WIN_H * 3600))
# Half an hour after the day's last close: the k-th cluster's window opens
# at 02:00 + k hours.
LAST_CLOSE=$((2 + N - 1 + WIN_H)) # hour
CLOSED=$(printf '%02d:30' "$LAST_CLOSE")
END=2026-03-04T$CLOSED:00Z # Wednesday, after the last close
echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

NS=$(new_ns fig)
WPORT=$(free_port)
hcs=()
for ((i = 0; i < N; i++)); do hcs+=("$(printf 'c%02d' "$i")"); done
chart_webhook_config "$WPORT" "$NS" "${hcs[@]/#/$NS-}" | k apply -f - >/dev/null ||
  not_ok "the chart's webhook configuration"

# The k-th cluster's window: daily from 02:00 + k hours, WIN_H hours.
wstart() { echo $((7200 + $1 * 3600)); }
for ((i = 0; i < N; i++)); do
  c=${hcs[$i]}
  st=$(wstart "$i")
  mk_policy "$NS" "p-$c" "$(jq -nc --arg t "$(printf '%02d:%02d' $((st / 3600)) $((st % 3600 / 60)))" --arg d "${WIN_H}h" '{
    strategy: "MaintenanceSchedule", maintenanceSchedule: {timeZone: "UTC",
      permit: {recurrence: {frequency: "Daily", daily: {interval: 1}}, startTime: $t, duration: $d}}}')" ||
    not_ok "policy p-$c"
  mk_hc "$NS" "$c" "policy=p-$c" >/dev/null || not_ok "HostedCluster $c"
  for t in Replace InPlace; do
    np=$c-$(tr 'A-Z' 'a-z' <<<"${t:0:1}")
    api POST "$HS/namespaces/$NS/nodepools" "$(jq -nc --arg n "$np" --arg c "$c" --arg t "$t" \
      --arg img "$REL.0-x86_64" --arg p "p-$c" '{
      apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
      metadata: {name: $n, annotations: {"changemanagement.hypershift.openshift.io/policy": $p}},
      spec: {clusterName: $c, replicas: 1, management: {upgradeType: $t}, release: {image: $img}}}')" \
      application/json >/dev/null || not_ok "NodePool $np"
  done
done

# Openings come one cluster at a time, but each starts three objects at once:
# the model reconciles as many at once as HyperShift does (HS_WORKERS).
model_scenario_start c --replacement-duration 20m --hc-status --workers "$HS_WORKERS"
fleet_ready() {
  [ "$(model_records | jq -s '[.[] | select(.event == "machine-created")] | length')" -ge $((2 * N)) ] &&
    [ "$(model_records | jq -s '[.[] | select(.event == "machineset-created")] | length')" -ge "$N" ] &&
    [ "$(api GET "$CAPI/machinedeployments?labelSelector=changemanagement.hypershift.openshift.io%2Fopted-in%3Dtrue" |
      jq --arg p "$NS-" '[.items[] | select(.metadata.namespace | startswith($p))] | length')" -eq "$N" ] &&
    [ "$(api GET "$CAPI/machinesets?labelSelector=changemanagement.hypershift.openshift.io%2Fopted-in%3Dtrue" |
      jq --arg p "$NS-" '[.items[] | select(.metadata.namespace | startswith($p))] | length')" -eq "$N" ]
}
check "every pool's machines are created; the controller labelled them" wait_for "$FLEET_WAIT" fleet_ready
sleep 1 # what the model still does to converge is not a change of a running cluster
sleep_until_sim c "2026-03-01T$CLOSED:00Z" 0 # Sunday's windows closed (on "main" long since)

# bump VERSION: a new release on every HostedCluster and NodePool, all
# restricted at that moment (checked).
bump() {
  local c img=$REL.$1-x86_64
  check "restricted everywhere when the release 4.17.$1 is requested" before_sim c "2026-03-0$2T02:00:00Z"
  local p pids=()
  # Twelve writes at a time, fast enough that the simulated clock does not
  # run into the first window meanwhile.
  for c in "${hcs[@]}"; do
    for p in "$(hc_path "$NS" "$c")" "$(np_path "$NS" "$c-r")" "$(np_path "$NS" "$c-i")"; do
      api PATCH "$p" "{\"spec\":{\"release\":{\"image\":\"$img\"}}}" >/dev/null &
      pids+=($!)
      [ ${#pids[@]} -lt 12 ] || { wait "${pids[@]}"; pids=(); }
    done
  done
  [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
  check "and still when the last was written" before_sim c "2026-03-0$2T02:00:00Z"
}
# What the model did before the first request (pools and control planes
# created) is no change of a running cluster.
B1=$(sim_lo c)
bump 1 2
sleep_until_sim c "2026-03-02T$CLOSED:00Z" 0 # Monday: every window of the day closed
STRETCH_FROM=$(sim_lo c)
s0=$(model_summary) w0=$(metric c hcp_controller_writes_total)
bump 2 3
# The reaction to the request is over 3 simulated hours (9 s real) after it
# began (its 36 writes take up to 6 s).
sleep_until_sim c "2026-03-02T$(printf '%02d:30' $((LAST_CLOSE + 3))):00Z" 0
smid=$(model_summary) wmid=$(metric c hcp_controller_writes_total)
vmid=$(metrics c | grep '^hcp_controller_api_requests_total{verb="\(patch\|create\)"')
# Until the controller's clock may just have reached STRETCH_TO (its upper
# bound), so that the window at 02:00 is certainly not open yet.
sleep "$(awk -v h="$(sim_hi c)" -v x="$(epoch "$STRETCH_TO")" -v k="$SCALE" 'BEGIN { d = (x - h) / k; printf "%.3f", (d > 0 ? d : 0) }')"
s1=$(model_summary) w1=$(metric c hcp_controller_writes_total)
check "the writes counted before Tuesday's first window opens" before_sim c 2026-03-03T02:00:00Z
v1=$(metrics c | grep '^hcp_controller_api_requests_total{verb="\(patch\|create\)"')
sleep_until_sim c "2026-03-03T$CLOSED:00Z" 0
bump 3 4
sleep_until_sim c "$END" 0
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. initiations outside a permitted window -------------------------------------

model_records >"$CTL_TMP/rec.jsonl"
# The window of an object's cluster: its index from the name (cNN...).
jq -c --argjson scale "$SCALE" --argjson b1 "$B1" --argjson dur "$WIN_S" '
  def secs: (sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) + ((capture("\\.(?<f>[0-9]+)Z$").f // "0") | ("0." + .) | tonumber);
  def k: (.object | capture("/c(?<k>[0-9]+)") .k | tonumber);
  select(.event | IN("controlplane-initiation", "machineset-created", "inplace-target-set",
                     "replacement-start", "inplace-update-start"))
  | (.at | secs) as $t | select($t >= $b1) | (7200 + k * 3600) as $w
  | (((($t % 86400) - $w) + 86400) % 86400) as $into
  | . + {into: $into, inside: ($into < $dur),
         late: (if $into >= $dur then $into - $dur else 0 end)}' "$CTL_TMP/rec.jsonl" >"$CTL_TMP/init.jsonl"
count() { jq -s "[.[] | select($1)] | length" "$CTL_TMP/init.jsonl"; }
INIT='.event | IN("controlplane-initiation", "replacement-start", "inplace-target-set")'
starts=$(count "$INIT")
outside=$(count "($INIT) and (.inside | not)")
stray=$(count '.event == "machineset-created" and (.inside | not)')
machines=$(count '.event | IN("replacement-start", "inplace-update-start")')
late=$(count "(.event | IN(\"replacement-start\", \"inplace-update-start\")) and .late > $SCALE")
boundaries=$(grep -cE "Window(Opened|Closed) " "${CTL_LOG[c]}")
echo "# figure: $boundaries window boundaries (controller Events) over $((3 * N)) objects; $starts initiations (control plane $(count '.event == "controlplane-initiation"'), Replace machine replacements $(count '.event == "replacement-start"'), InPlace targets $(count '.event == "inplace-target-set"')), outside a permitted window: $outside; MachineSets created outside a window (no machine moved to them there): $stray"
echo "# figure: $machines machine replacements and in-place updates; started more than 1 s (real) after a close: $late"
in_range "at least 200 window boundaries" "$boundaries" 200 100000
check_eq "every held change was initiated (3 per object)" $((9 * N)) "$starts"
check_eq "no initiation outside a permitted window" 0 "$outside"
[ "$outside" = 0 ] || grep -E "ChangeNotHeld|change not held" "${CTL_LOG[c]}" | head -4 | sed 's/^/#   /'
[ "$outside" = 0 ] || jq -c "select(($INIT) and (.inside | not)) | [.at, .real, .event, .object, .from, .to, .into]" \
  "$CTL_TMP/init.jsonl" | head -10 | sed 's/^/#   /'
check_eq "no machine update started more than 1 s after a close" 0 "$late"

# ---- 2. window open to initiation (real time) ----------------------------------------

# The controller's WindowOpened lines (real time, kind, object) and the
# model's initiations (real time): for each opening, the first initiation of
# that object within the window.
# The release of a held change is written before the reconcile that tells
# WindowOpened, so an opening is the first of the two lines for the object;
# lines of the same object within half a simulated day are the same opening.
grep -E "(WindowOpened|held change released) kind=(HostedCluster|NodePool) " "${CTL_LOG[c]}" |
  sed -E 's/^([^ ]+) .*kind=([A-Za-z]+) namespace=[^ ]+ name=([^ ]+).*/\1 \2 \3/' |
  while read -r t kd nm; do echo "$(date -u -d "$t" +%s.%N) $kd $nm"; done |
  awk -v gap="$((43200 / SCALE))" '{ k = $2 " " $3; if (!(k in last) || $1 - last[k] > gap) print; last[k] = $1 }' >"$CTL_TMP/opened"
# open_lags EVENT...: for each opening, real seconds to the first of the
# EVENTs of that object after it, sorted. From the initiations of part 1,
# which are those from the first request on (B1): on "capi" the fleet is
# created during Sunday's windows, and a pool's first MachineSet is no
# change let through.
open_lags() {
  jq -r --args 'select(.event | IN($ARGS.positional[]))
    | [.real, (if .event == "controlplane-initiation" then "HostedCluster" else "NodePool" end),
       (.object | split("/")[1]), .event] | join(" ")' "$@" <"$CTL_TMP/init.jsonl" >"$CTL_TMP/inits"
  awk '
    function secs(s,   c) { gsub(/Z$/, "", s); c = "date -u -d \"" s "Z\" +%s.%N"; c | getline t; close(c); return t }
    NR == FNR { n++; ot[n] = $1; ok[n] = $2 " " $3; next }
    { t = secs($1); key = $2 " " $3
      best = -1
      for (i = 1; i <= n; i++) if (ok[i] == key && ot[i] <= t && (best < 0 || ot[i] > ot[best])) best = i
      if (best > 0 && !(best in done)) { done[best] = 1; printf "%.3f\n", t - ot[best] } }' \
    "$CTL_TMP/opened" "$CTL_TMP/inits" | sort -n
}
pct() { awk -v p="$1" '{ v[NR] = $1 } END { i = int(NR * p + 0.999999); if (i < 1) i = 1; print v[i] }' <<<"$2"; }
# report_lags WHAT LAGS: the figure line, p99 against the 1 s target.
report_lags() {
  local met=missed
  lt "$(pct 0.99 "$2")" 1.0001 && met=met
  echo "# figure: window open -> $1, real: $(grep -c . <<<"$2") openings, p50 $(pct 0.5 "$2") s, p99 $(pct 0.99 "$2") s, max $(pct 1 "$2") s; target p99 <= 1 s $met (load average $(cut -d' ' -f1 /proc/loadavg), this test's processes at nice ${FIG_NICE:-$(nice)})"
}
# The initiation: the control plane's, a Replace pool's new MachineSet (Cluster
# API's MachineDeployment controller makes it as soon as HyperShift writes the
# new template), an InPlace pool's first in-place update. A Replace pool's
# first new Machine is reported apart: on real Cluster API its MachineSet
# controller makes it 2-3 s later at its own pace (e2e/README.md). Beside the
# model it comes with its MachineSet.
lags=$(open_lags controlplane-initiation machineset-created inplace-update-start)
mlags=$(open_lags replacement-start)
report_lags "initiation (control plane, new MachineSet, in-place update)" "$lags"
report_lags "a Replace pool's first new Machine" "$mlags"
in_range "an opening measured for every object and day" "$(grep -c . <<<"$lags")" $((9 * N)) $((9 * N))
in_range "a first new Machine measured for every Replace pool and day" "$(grep -c . <<<"$mlags")" $((3 * N)) $((3 * N))
# The 1 s target is reported, not enforced: on a shared, loaded machine the
# chain of reconciles falls behind. Several seconds would mean an initiation
# waiting for something other than the chain of events.
in_range "every initiation within 5 s (real) of its window opening" "$(pct 1 "$lags")" 0 5
in_range "every first new Machine within $MACHINE_MAX s (real) of its window opening" "$(pct 1 "$mlags")" 0 "$MACHINE_MAX"

# ---- 3. writes while restricted with a change held ----------------------------------

stretch=$(awk -v a="$STRETCH_FROM" -v b="$(epoch "$STRETCH_TO")" -v k="$SCALE" \
  'BEGIN { printf "%d simulated minutes, %.1f s real", (b - a) / 60, (b - a) / k }')
# per_object FROM TO: per object of the test, the updates seen by writers
# other than the model and this test (the controller; an informer may fold
# two quick updates into one, so this never overcounts) and the model's own
# writes.
per_object() {
  jq -n --argjson a "$1" --argjson b "$2" --arg ns "$NS" --argjson req "$3" '
    [($b.observed | keys[]) | select(test("^(HostedCluster|NodePool) " + $ns + "/") or
                                      test("^(MachineDeployment|MachineSet) " + $ns + "-"))] as $keys
    | [$keys[] | {key: ., model: (($b.writes[.] // 0) - ($a.writes[.] // 0)),
                  others: ([((($b.observed[.] // 0) - ($a.observed[.] // 0)) -
                             (($b.writes[.] // 0) - ($a.writes[.] // 0)) -
                             (if $req and test("^(HostedCluster|NodePool) ") then 1 else 0 end)), 0] | max)}]'
}
first=$(per_object "$s0" "$smid" true)
second=$(per_object "$smid" "$s1" false)
top() { jq -r "max_by(.$2) | \"\(.$2) (\(.key))\"" <<<"$1"; }
echo "# figure: restricted with a change held for $stretch over $(jq length <<<"$first") objects: the controller wrote $((${w1%.*} - ${w0%.*})) times in all; per object at most $(top "$first" others) while the request was held; the model (HyperShift, which never sees the held request) at most $(top "$first" model)"
echo "# figure: then, until the window: writes by the controller $((${w1%.*} - ${wmid%.*})) ($(join -a2 <(sed 's/ / /' <<<"$vmid" | sort) <(sort <<<"$v1") | awk 'NF == 3 { d = $3 - $2 } NF == 2 { d = $2 } d { printf "%s+%d ", $1, d }')), by the model $(jq 'map(.model) | add' <<<"$second"); to the objects of the test: $(jq 'map(.others) | add' <<<"$second")"
in_range "the controller writes an object at most 3 times while held" "$(jq 'map(.others) | max' <<<"$first")" 0 3
# In all, the writes include those of the status companion beside each
# held object (its held change and who asked for it, a NodePool's too since
# NodePool holds record the requester): at most 4 per held object, the
# object and its companion together.
in_range "the controller's writes in all: at most 4 per held object and its companion" "$((${w1%.*} - ${w0%.*}))" 0 $((4 * 3 * N))
check_eq "no write loop: once the request is held, nobody writes its objects until the window" "0 0" \
  "$(jq 'map(.others) | add' <<<"$second") $(jq 'map(.model) | add' <<<"$second")"
jq -c '.[] | select(.others > 0 or .model > 0)' <<<"$second" | head -6 | sed 's/^/#   /'
check_eq "every change went through the webhooks (none counted as got past)" "0 0" \
  "$(metric c 'change_management_unheld_changes_total\{kind="HostedCluster",system="control-plane"\}') $(metric c 'change_management_unheld_changes_total\{kind="NodePool",system="worker-nodes"\}')"

stop_ctl c
model_stop
summary
