#!/usr/bin/env bash
# Runs the end-to-end suites side by side: each suite is a job (a make
# target of e2e/*/*.mk narrowed to one suite with E2E_ONLY), and up to
# E2E_JOBS jobs run at once, each in a lane of its own. A lane is a set of
# test cluster instances of its own (e2e/cluster.sh with HCP_E2E_STATE_DIR
# e2e/.local-laneN; a developer's own instances under e2e/.local are never
# touched) in a network namespace of its own where the machine allows it
# (below), so two suites share nothing (STYLE.md, Tests). Most of a suite's
# time is spent waiting on simulated clocks and Cluster API's pace, so two
# lanes keep both cores of a 2-core machine busy where one left one idle.
#
#   scripts/e2e-lanes.sh JOBS-FILE
#
# JOBS-FILE has one tab-separated line per suite (`make e2e-jobs` writes
# it): target, suite, instances (comma-separated), the builds it needs
# beyond its instances' own (comma-separated names of
# scripts/prebuild-e2e.sh; "-" for none of either), and 1 when the suite
# keeps the machine to itself (its figures time the controller at a
# boundary: nothing else runs beside it), else 0.
#
# Order: longest first (the longest-processing-time rule), by the seconds
# each suite took in the last run (E2E_TIMES, default build/e2e-times.tsv,
# written at the end of every run) or, on a fresh machine, the checked-in
# e2e/suite-times.tsv; a suite in neither counts 60 s. A job starts when a
# lane is free and the builds it needs have ended (scripts/prebuild-e2e.sh
# marks each as it ends, so the first lane starts while the others still
# build; without a build in the background, none is waited for). A suite
# that keeps the machine to itself starts only when every lane is idle and
# the suites beside the lanes (E2E_BESIDE) have ended, with every instance
# stopped (its own start afresh), once the machine has quieted (settle: the
# cores less than 30% busy over 5 s, for at most E2E_SETTLE_SECONDS,
# default 90), and no other starts beside it.
#
# Output: each suite's output goes to its log (build/e2e-logs/) and is
# printed whole when it ends, so that the run reads suite by suite; a line
# says when each starts. Counts go to the tally as before (run-tests.sh);
# each suite's seconds and lane go to $TALLY.times for the table at the
# end of `make test`. Every job runs to its end whatever another's result:
# the exit status is 1 when any failed.
#
# A lane stops each instance it started once no suite still to run needs
# it, and everything it started at the end.
#
# E2E_BESIDE names make targets (`make test`: asan valgrind fuzz-smoke) run
# one after another beside the lanes, in a lane of their own that is not
# counted in E2E_JOBS: they keep one core busy while the suites mostly wait.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

jobs_file=${1:?usage: $0 JOBS-FILE}
# Lanes: E2E_JOBS, else the cores plus two (at most 6): the suites mostly
# wait, so two more lanes than cores keep them busy (4 on a 2-core
# machine; there each suite took about 5% longer with 4 lanes than with 3,
# and the lanes' part of `make test` a fifth less time).
ncores=$(nproc 2>/dev/null || echo 2)
lanes=${E2E_JOBS:-$((ncores + 2 > 6 ? 6 : ncores + 2))}
[[ "$lanes" =~ ^[1-9][0-9]*$ ]] || { echo "e2e-lanes: E2E_JOBS must be a positive integer, not '$lanes'" >&2; exit 2; }
BUILD=${BUILD:-build}
times_file=${E2E_TIMES:-$BUILD/e2e-times.tsv}
default_times=e2e/suite-times.tsv
tally=${TALLY:-$BUILD/test-tally}
logdir=$BUILD/e2e-logs
prebuild_dir=${E2E_PREBUILD_DIR:-$BUILD}
MAKE=${MAKE:-make}
mkdir -p "$logdir"

# ---- lanes --------------------------------------------------------------------

# Each lane runs in a network namespace of its own when the machine allows
# it (root, iproute2 and util-linux's nsenter; E2E_NETNS=0 turns it off): its loopback is its own,
# so nothing a suite listens on can meet another lane's. That matters for
# Cluster API's in-memory provider, which listens on fixed ports of every
# address (its workload clusters' mux: 19000, then 20000 and up,
# sigs.k8s.io/cluster-api/test infrastructure/inmemory/pkg/server/mux.go,
# NewWorkloadClustersMux): two "capi" instances in one namespace cannot
# both run it. Without namespaces the lanes share the machine's loopback,
# with port ranges cut one per lane, and the suites on instances that run
# the in-memory provider ("capi", "capi-hypershift") all go to lane 1.
netns_prefix=hcp-e2e-$$
use_netns=0
if [ "${E2E_NETNS:-1}" != 0 ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null &&
  command -v nsenter >/dev/null && ip netns add "$netns_prefix-probe" 2>/dev/null; then
  ip netns del "$netns_prefix-probe" 2>/dev/null
  use_netns=1
  # Those of a run that was killed (its scheduler is gone, or its pid is
  # another program's now; a scheduler that outlived its run stops its own,
  # below), with what still runs in them: an API server left
  # there by a killed run goes on using the cores beside this one.
  for ns in $(ip netns list 2>/dev/null | awk '/^hcp-e2e-[0-9]+-lane[0-9]+/ { print $1 }'); do
    pid=${ns#hcp-e2e-} pid=${pid%%-*}
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q e2e-lanes && continue
    left=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
    if [ -n "${left// /}" ]; then
      echo "e2e-lanes: stopping what a killed run left in $ns (pids $left)" >&2
      kill -9 $left 2>/dev/null
    fi
    ip netns del "$ns" 2>/dev/null || true
  done
fi

lane_env() { # lane_env N: the assignments a job of lane N runs with
  local n=$1 span fspan
  echo "E2E_LANE=$n HCP_E2E_STATE_DIR=$repo/e2e/.local-lane$n"
  [ "$use_netns" = 1 ] && return 0
  # The instances' ports (26443-26999) and the suites' own (27000-32699),
  # one range per lane.
  span=$(((26999 - 26443 + 1) / lanes)) fspan=$(((32699 - 27000 + 1) / lanes))
  echo "HCP_E2E_PORT_MIN=$((26443 + (n - 1) * span)) HCP_E2E_PORT_MAX=$((26443 + n * span - 1))"
  echo "HCP_E2E_FREE_PORT_MIN=$((27000 + (n - 1) * fspan)) HCP_E2E_FREE_PORT_MAX=$((27000 + n * fspan - 1))"
}

lane_run() { # lane_run N COMMAND...: COMMAND in lane N (its namespace, its assignments)
  local n=$1
  shift
  # shellcheck disable=SC2046 # the lane's assignments are words
  if [ "$use_netns" = 1 ]; then
    # nsenter, not `ip netns exec`: that one also remounts /sys in a mount
    # namespace of its own, which hides the cgroup file system from runc
    # (the image's suite runs containers).
    nsenter --net="/run/netns/$netns_prefix-lane$n" env $(lane_env "$n") "$@"
  else
    env $(lane_env "$n") "$@"
  fi
}

lanes_make() { # the lanes' namespaces, their loopback up
  local n
  [ "$use_netns" = 1 ] || return 0
  for ((n = 1; n <= lanes; n++)); do
    ip netns add "$netns_prefix-lane$n" && ip -n "$netns_prefix-lane$n" link set lo up ||
      { echo "e2e-lanes: cannot make network namespace $netns_prefix-lane$n" >&2; exit 2; }
  done
}

# Instances each lane started (stopped when no suite still to run needs them).
declare -A started
lane_up() { # lane_up N INSTANCE...: the job pins them; the lane stops them later
  local n=$1 i
  shift
  for i in "$@"; do started[$n:$i]=1; done
}

# Instances that run Cluster API's in-memory provider.
inmemory() { [[ ",$1," =~ ,capi(-[a-z0-9-]*)?, ]]; }

# inmemory_yield N INSTANCES: stops lane N's other instance that runs the
# in-memory provider, if any ("capi" before a suite on "capi-hypershift"):
# one loopback holds one.
inmemory_yield() {
  local n=$1 key inst
  for key in "${!started[@]}"; do
    [ "${key%%:*}" = "$n" ] || continue
    inst=${key#*:}
    inmemory "$inst" || continue
    [[ ",$2," == *",$inst,"* ]] && continue
    lane_run "$n" e2e/cluster.sh down "$inst" >/dev/null 2>&1 || true
    unset "started[$key]"
  done
}

# ---- the jobs -----------------------------------------------------------------

estimate() { # estimate TARGET SUITE: seconds, from the last run or the default
  local f s
  for f in "$times_file" "$default_times"; do
    [ -f "$f" ] || continue
    s=$(awk -F'\t' -v t="$1" -v s="$2" '$1 == t && $2 == s {v = $3} END {if (v != "") print v}' "$f")
    [ -n "$s" ] && { echo "$s"; return; }
  done
  echo 60
}

# The builds the instances themselves need (e2e/cluster.sh): the API server
# for every one; Cluster API's managers where they run (its webhooks serve
# on "main" and "model" too, e2e/capi/lib.sh capi_instance); HyperShift's
# CRDs where they are served ("main" and "model" stage them,
# "hypershift" and "capi-hypershift" take them from its reconciler's build).
instance_needs() { # instance_needs INSTANCES: comma-separated builds
  local i out=""
  for i in ${1//,/ }; do
    out+=,apiserver
    case "$i" in capi | capi-* | main | model | model-*) out+=,capi ;; esac
    case "$i" in main | model | model-*) out+=,hypershift-crds ;; esac
    case "$i" in hypershift | hypershift-* | capi-hypershift | capi-hypershift-*) out+=,hypershift ;; esac
  done
  echo "${out#,}"
}

declare -a J_TARGET J_SUITE J_INST J_NEEDS J_EXCL J_EST
n=0
while IFS=$'\t' read -r t s i nd x; do
  [ -n "$t" ] || continue
  [ "$i" = - ] && i=""
  [ "$nd" = - ] && nd=""
  J_TARGET[n]=$t J_SUITE[n]=$s J_INST[n]=$i J_NEEDS[n]=$(instance_needs "$i")${nd:+,$nd} J_EXCL[n]=${x:-0}
  J_EST[n]=$(estimate "$t" "$s")
  n=$((n + 1))
done <"$jobs_file"
[ "$n" -gt 0 ] || { echo "e2e-lanes: no suites in $jobs_file" >&2; exit 2; }
# Longest first; ties in the file's order.
mapfile -t order < <(for ((k = 0; k < n; k++)); do printf '%s\t%s\n' "${J_EST[k]}" "$k"; done |
  sort -t$'\t' -k1,1nr -k2,2n -s | cut -f2)

# A build in the background (scripts/prebuild-e2e.sh holds its lock) has
# ended when its marker exists; with none running, every build has.
needs_met() {
  local b
  [ -n "$1" ] || return 0
  if flock -n "$prebuild_dir/prebuild-e2e.lock" true 2>/dev/null; then return 0; fi
  for b in ${1//,/ }; do
    [ -e "$prebuild_dir/prebuild-e2e.d/$b.end" ] || return 1
  done
}

# ---- running ------------------------------------------------------------------

declare -A lane_pid=() lane_job=()
pending=("${order[@]}")
failed=0 t_start=$SECONDS
: >"$times_file.new"
printf 'e2e-lanes: %d suites in %d lanes%s, longest first (estimates: %s)\n' "$n" "$lanes" \
  "$([ "$use_netns" = 1 ] && echo ", each in a network namespace of its own")" \
  "$( [ -f "$times_file" ] && echo "the last run, $times_file" || echo "$default_times")"

run_job() { # run_job LANE JOB (in the background): one suite, its log, its record
  local ln=$1 k=$2 t0=$SECONDS rc=0 log insts
  log=$logdir/$(basename "${J_SUITE[k]}" .sh)-${J_TARGET[k]}.log
  insts=${J_INST[k]//,/ }
  {
    # shellcheck disable=SC2086 # the instances are words
    if [ -n "$insts" ]; then lane_run "$ln" e2e/cluster.sh up $insts || rc=$?; fi
    [ "${J_EXCL[k]}" = 1 ] && settle
    if [ "$rc" = 0 ]; then
      lane_run "$ln" TALLY="$tally" "$MAKE" --no-print-directory "${J_TARGET[k]}" \
        E2E_ONLY="${J_SUITE[k]}" || rc=$?
    fi
  } >"$log" 2>&1 </dev/null
  local secs=$((SECONDS - t0))
  printf '%s\t%s\t%s\n' "${J_TARGET[k]}" "${J_SUITE[k]}" "$secs" >>"$times_file.new"
  {
    flock 7
    echo "==== lane $ln: ${J_TARGET[k]} $(basename "${J_SUITE[k]}") ended after ${secs} s (exit status $rc)"
    cat "$log"
  } 7>>"$logdir/.print.lock"
  return "$rc"
}

# The targets beside the lanes, one after another, each printed whole.
beside_run() {
  local t t0 rc=0 r log
  for t in ${E2E_BESIDE:-}; do
    log=$logdir/beside-$t.log t0=$SECONDS r=0
    E2E_LANE=beside TALLY="$tally" "$MAKE" --no-print-directory "$t" >"$log" 2>&1 </dev/null || r=$?
    [ "$r" = 0 ] || rc=1
    {
      flock 7
      echo "==== beside the lanes: make $t ended after $((SECONDS - t0)) s (exit status $r)"
      cat "$log"
    } 7>>"$logdir/.print.lock"
  done
  return "$rc"
}

# cpu_busy: the share of the cores busy over the next 5 s, in percent.
cpu_busy() {
  local a b
  a=$(head -1 /proc/stat) && sleep 5 && b=$(head -1 /proc/stat) || { echo 0; return; }
  awk -v a="$a" -v b="$b" 'BEGIN { n = split(a, x, " "); split(b, y, " ");
    for (i = 2; i <= n; i++) { t += y[i] - x[i]; if (i == 5 || i == 6) idle += y[i] - x[i] }
    printf "%d\n", (t > 0 ? 100 * (t - idle) / t : 0) }'
}
# settle: waits until the machine is quiet (cpu_busy under 30), for at most
# E2E_SETTLE_SECONDS, and says how long it waited.
settle() {
  local t0=$SECONDS busy
  while :; do
    busy=$(cpu_busy)
    [ "${busy:-100}" -lt 30 ] && break
    [ $((SECONDS - t0)) -ge "${E2E_SETTLE_SECONDS:-90}" ] && break
  done
  echo "==== the machine settled for $((SECONDS - t0)) s (cores ${busy}% busy, load average $(cut -d' ' -f1-3 /proc/loadavg))"
}

exclusive_running() {
  local l
  for l in "${!lane_job[@]}"; do [ "${J_EXCL[${lane_job[$l]}]}" = 1 ] && return 0; done
  return 1
}

shared_pending() { # a job that does not keep the machine to itself is still to run
  local j
  for j in "${pending[@]}"; do [ "${J_EXCL[j]}" = 1 ] || return 0; done
  return 1
}

start_next() { # starts one job on a free lane; returns 1 when none could start
  local ln free="" idx j
  for ((ln = 1; ln <= lanes; ln++)); do
    [ -z "${lane_pid[$ln]:-}" ] && { free=$ln; break; }
  done
  [ -n "$free" ] || return 1
  exclusive_running && return 1
  for idx in "${!pending[@]}"; do
    j=${pending[idx]}
    needs_met "${J_NEEDS[j]}" || continue
    # A suite that keeps the machine to itself goes last, alone.
    if [ "${J_EXCL[j]}" = 1 ] && { [ ${#lane_pid[@]} -gt 0 ] || shared_pending; }; then continue; fi
    if [ "${J_EXCL[j]}" = 1 ] && [ -n "$beside_pid" ]; then continue; fi
    # Without namespaces, the in-memory provider runs in lane 1 only.
    if [ "$use_netns" = 0 ] && [ "$free" != 1 ] && inmemory "${J_INST[j]}"; then continue; fi
    # Alone: on instances of its own, started afresh, with nothing left
    # running beside it (not even what earlier suites left in an instance).
    [ "${J_EXCL[j]}" = 1 ] && release_all
    unset 'pending[idx]'
    pending=("${pending[@]}")
    inmemory "${J_INST[j]}" && inmemory_yield "$free" "${J_INST[j]}"
    lane_up "$free" ${J_INST[j]//,/ }
    echo "==== lane $free: ${J_TARGET[j]} $(basename "${J_SUITE[j]}") starts (estimate ${J_EST[j]} s$([ "${J_EXCL[j]}" = 1 ] && echo ", alone"))"
    run_job "$free" "$j" &
    lane_pid[$free]=$!
    lane_job[$free]=$j
    return 0
  done
  return 1
}

# collected PID: 1 while PID runs; once it has ended, its status is
# recorded (failed=1 unless 0) and 0. Soon after its end, not later: bash
# keeps an ended child's status only until a later child of this shell gets
# its pid, and a run forks well past pid_max (32768 here) while the lanes go on.
collected() {
  kill -0 "$1" 2>/dev/null && return 1
  wait "$1" || failed=1
  return 0
}

reap() { # frees the lanes whose job has ended, and the targets beside them
  local ln
  for ln in "${!lane_pid[@]}"; do
    collected "${lane_pid[$ln]}" || continue
    unset "lane_pid[$ln]" "lane_job[$ln]"
    ended=1
  done
  if [ -n "$beside_pid" ] && collected "$beside_pid"; then beside_pid=""; fi
}

# Stops the instances a lane started that neither its running job nor any
# suite still to run needs: a lane that is done with Cluster API's
# managers does not keep them busy beside the other.
release_unneeded() {
  local key ln inst j need
  for key in "${!started[@]}"; do
    ln=${key%%:*} inst=${key#*:} need=""
    j=${lane_job[$ln]:-}
    [ -n "$j" ] && [[ ",${J_INST[j]}," == *",$inst,"* ]] && continue
    for j in "${pending[@]}"; do
      [[ ",${J_INST[j]}," == *",$inst,"* ]] && { need=1; break; }
    done
    [ -n "$need" ] && continue
    lane_run "$ln" e2e/cluster.sh down "$inst" >/dev/null 2>&1 || true
    unset "started[$key]"
  done
}

# release_all: stops every instance the lanes started.
release_all() {
  local key
  for key in "${!started[@]}"; do
    lane_run "${key%%:*}" e2e/cluster.sh down "${key#*:}" >/dev/null 2>&1 || true
    unset "started[$key]"
  done
}

stop_lanes() {
  local n
  release_all
  [ "$use_netns" = 1 ] || return 0
  for ((n = 1; n <= lanes; n++)); do ip netns del "$netns_prefix-lane$n" 2>/dev/null; done
}
trap 'stop_lanes' EXIT
trap 'exit 130' INT TERM
lanes_make

beside_pid=""
if [ -n "${E2E_BESIDE:-}" ]; then
  echo "==== beside the lanes: make ${E2E_BESIDE} starts"
  beside_run &
  beside_pid=$!
fi

# The run that started the scheduler (make test) was killed while this
# went on: its parent is another process now. What it started is stopped
# with it, lanes and all, rather than going on beside the next run.
parent=$PPID
orphaned() {
  local stat
  stat=$(cat "/proc/$$/stat" 2>/dev/null) || return 1
  stat=${stat##*) } # past "pid (comm) ": state, ppid, ...
  set -- $stat
  [ "$2" != "$parent" ]
}
kill_tree() { # kill_tree PID: PID and every process under it
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
  kill -9 "$1" 2>/dev/null
}

while [ ${#pending[@]} -gt 0 ] || [ ${#lane_pid[@]} -gt 0 ]; do
  if orphaned; then
    echo "e2e-lanes: the run that started these lanes is gone (parent $parent); stopping them" >&2
    for pid in "${lane_pid[@]}" $beside_pid; do kill_tree "$pid"; done
    if [ "$use_netns" = 1 ]; then
      for ((n = 1; n <= lanes; n++)); do
        kill -9 $(ip netns pids "$netns_prefix-lane$n" 2>/dev/null) 2>/dev/null
      done
    fi
    exit 130
  fi
  while start_next; do :; done
  # Until a job ends, or a second passes (a build that ends may let a
  # waiting job start).
  sleep 1 &
  wait -n "${lane_pid[@]}" $! 2>/dev/null
  ended=""
  reap
  [ -n "$ended" ] && release_unneeded
done

if [ -n "$beside_pid" ]; then wait "$beside_pid" || failed=1; fi # lanes ended first

# The times of this run become the estimates of the next; suites that did
# not run keep theirs.
if [ -f "$times_file" ]; then
  awk -F'\t' 'NR == FNR {seen[$1 FS $2] = 1; print; next} !(($1 FS $2) in seen)' \
    "$times_file.new" "$times_file" >"$times_file.tmp"
else
  cp "$times_file.new" "$times_file.tmp"
fi
mv "$times_file.tmp" "$times_file"
rm -f "$times_file.new"
echo "e2e-lanes: ${n} suites in $((SECONDS - t_start)) s on ${lanes} lanes$([ "$failed" = 0 ] || echo '; some failed')"
exit "$failed"
