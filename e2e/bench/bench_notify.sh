#!/usr/bin/env bash
# Notifications at scale (DESIGN.md 3.9), beside the HyperShift / Cluster API
# behaviour model with the admission webhooks holding the changes; the
# figures are printed as "# figure:" lines with the load average.
#
# month: 50 HostedClusters and 150 NodePools (one machine each) following
#   three policies with recurring windows (daily 02:00 4h, Saturday 00:00
#   8h, Tuesday and Thursday 20:00 6h), two release requests per object at
#   random simulated times (seeded: BENCH_NOTIFY_SEED), a receiver of the
#   bench's that is down for one simulated day, and the controller killed
#   (SIGKILL) and started again half way. What is due is derived from the
#   requests and the windows alone (notify_bench.py expect): held,
#   window-soon (48h and 1h, the default leads) and initiated per (object,
#   window), completed once per request (a NodePool's from UpdatingVersion,
#   which the model writes as HyperShift does), each matched to the request
#   it names (data.requestedAt). Checks every one delivered, none
#   twice, none lost; prints the delivery delay after the step while the
#   receiver is up, in simulated and real time.
# loop: window open -> release write delay of 10 held HostedClusters over
#   BENCH_LOOP_BOUNDARIES daily boundaries, without endpoints and with 10
#   endpoints that answer after 10 s each, each side BENCH_LOOP_REPEATS
#   times (alternating); whether the difference is within the run-to-run
#   noise (notify_bench.py noise).
# checks: the same window open -> release write delays without pre-start
#   checks and with 10 checks that answer 200 after 10 s each (DESIGN.md
#   3.15): asked their lead before the window, they change the boundary
#   by less than the run-to-run noise; every check asked about every held
#   release.
# config: a bad notifications key stops the start naming the key.
#
# BENCH_NOTIFY_PARTS (default "config month loop checks") narrows it;
# BENCH_NOTIFY_DAYS (30) and BENCH_NOTIFY_SCALE (8640: a day in 10 s) set
# the month (a run of fewer than 16 days takes the receiver down on day 2
# and kills the controller on day 4: BENCH_NOTIFY_PARTS=month
# BENCH_NOTIFY_DAYS=10 is a run of about 3 minutes); BENCH_NOTIFY_HCS (50)
# the HostedClusters, BENCH_NOTIFY_MODEL_WORKERS (HS_WORKERS of
# e2e/model/lib.sh, 10) the model's workers.
# Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/../controller/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

PY=$here/notify_bench.py
WH_NAME=hcp-bench-notify-$$
PARTS=${BENCH_NOTIFY_PARTS:-config month loop checks}
DAYS=${BENCH_NOTIFY_DAYS:-30}
SCALE=${BENCH_NOTIFY_SCALE:-8640}
SEED=${BENCH_NOTIFY_SEED:-24}
N_HC=${BENCH_NOTIFY_HCS:-50}
MODEL_WORKERS=${BENCH_NOTIFY_MODEL_WORKERS:-$HS_WORKERS}
NP_PER_HC=3
RECV_PIDS=()
DRIVER_PID=

load() { cut -d' ' -f1-3 /proc/loadavg; }
figure() { echo "# figure: $* (load $(load))"; }
receivers_start() { # DIR PORT DELAY [HOST]
  python3 "$PY" recv "$1" "$2" "$3" "${4:-127.0.0.1}" 2>>"$1/recv.err" &
  RECV_PIDS+=($!)
  wait_for 10 bash -c "ss -Htln 'src ${4:-127.0.0.1}:$2' | grep -q ."
}
receivers_stop() {
  local p
  for p in "${RECV_PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  RECV_PIDS=()
}
bench_cleanup() {
  receivers_stop
  [ -n "$DRIVER_PID" ] && kill "$DRIVER_PID" 2>/dev/null
  watch_stop
  webhook_scenario_cleanup
}

# ---- config -------------------------------------------------------------------

# bad_config KEY YAML: the controller refuses to start, naming KEY.
bad_config() {
  local out rc
  printf '%s\n' "$2" >"$CTL_TMP/bad.yaml"
  out=$(timeout 20 "$HCP_BIN" run --kubeconfig "$KCFG" --guard-config "$CTL_TMP/bad.yaml" \
    --webhook-bind-address 127.0.0.1:0 --webhook-cert-file "$CERT" --webhook-key-file "$KEY" \
    --metrics-bind-address 0 --health-probe-bind-address 0 2>&1)
  rc=$?
  check "bad notifications ($1): the start stops" test "$rc" -ne 0 -a "$rc" -ne 124
  check_contains "bad notifications ($1): the error names the key" "$1" "$out"
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [[ "$out" == *"$1"* ]]
}

part_config() {
  local n=0 good=0
  bad_config "notifications.endpoints[0].url" \
    $'notifications:\n  endpoints: [{name: a, url: "ftp://x"}]' && good=$((good + 1)); n=$((n + 1))
  bad_config "notifications.endpoints[1].name" \
    $'notifications:\n  endpoints: [{name: a, url: "http://x"}, {name: a, url: "http://y"}]' &&
    good=$((good + 1)); n=$((n + 1))
  bad_config "notifications.leads[0]" \
    $'notifications:\n  endpoints: [{name: a, url: "http://x"}]\n  leads: ["soon"]' &&
    good=$((good + 1)); n=$((n + 1))
  bad_config "notifications.queueSize" \
    $'notifications:\n  endpoints: [{name: a, url: "http://x"}]\n  queueSize: 0' &&
    good=$((good + 1)); n=$((n + 1))
  bad_config "notifications.endpoints[0].format" \
    $'notifications:\n  endpoints: [{name: a, url: "http://x", format: teams}]' &&
    good=$((good + 1)); n=$((n + 1))
  figure "bad notifications configuration: $good of $n stop the start naming the key"
}

# ---- month --------------------------------------------------------------------

POLICY_DAILY='{"strategy":"MaintenanceSchedule","maintenanceSchedule":{"timeZone":"UTC","permit":{"recurrence":{"frequency":"Daily"},"startTime":"02:00","duration":"4h"}}}'
POLICY_WEEKEND='{"strategy":"MaintenanceSchedule","maintenanceSchedule":{"timeZone":"UTC","permit":{"recurrence":{"frequency":"Weekly","weekly":{"daysOfWeek":["Saturday"]}},"startTime":"00:00","duration":"8h"}}}'
POLICY_TUETHU='{"strategy":"MaintenanceSchedule","maintenanceSchedule":{"timeZone":"UTC","permit":{"recurrence":{"frequency":"Weekly","weekly":{"daysOfWeek":["Tuesday","Thursday"]}},"startTime":"20:00","duration":"6h"}}}'
POLICY_NAMES=(daily weekend tue-thu)

# restart_kill: SIGKILL to controller a, started again on the same
# simulated time line with the same flags (the clock the model and the
# bench read goes on; a start at the time read before the kill would put
# the controller behind them by the restart, hours at this scale).
# restart_kill [SIGNAL]: KILL by default; TERM is a graceful restart.
restart_kill() {
  local args
  mapfile -t args < <(tr '\0' '\n' <"/proc/${CTL_PID[a]}/cmdline" |
    sed '1,/^--health-probe-bind-address$/d' | sed 1d)
  stop_ctl a "${1:-KILL}"
  cp "${CTL_LOG[a]}" "$dir/controller-before-${1:-KILL}.log"
  start_ctl a "$NS" @continue "$SCALE" "${args[@]}"
}

part_month() {
  local dir port start end i j p objs="" npobjs="" hcs="" plan t0 down0 down1 restart term e j_out
  NS=$(new_ns nmonth) || return
  dir=$CTL_TMP/month
  mkdir -p "$dir"
  port=$(free_port)
  start=2026-03-01T00:00:00Z # a Sunday
  t0=$(epoch "$start")
  end=$((t0 + DAYS * 86400))
  cat >"$CTL_TMP/guard-month.yaml" <<YAML
notifications:
  endpoints: [{name: recv, url: "http://127.0.0.1:$port/hook"}]
YAML
  must mk_policy "$NS" daily "$POLICY_DAILY" || return
  must mk_policy "$NS" weekend "$POLICY_WEEKEND" || return
  must mk_policy "$NS" tue-thu "$POLICY_TUETHU" || return
  local t_setup
  t_setup=$(now_us)
  # Four at a time (the API server's round trips dominate); a NodePool
  # follows its HostedCluster's policy (a NodePool's changes wait for both
  # schedules, so they are the same here to keep the expected windows
  # plain).
  : >"$dir/setup-failed"
  for ((i = 1; i <= N_HC; i++)); do
    p=${POLICY_NAMES[$(((i * 7 + SEED) % 3))]}
    hcs+=" hc$i"
    objs+="{\"kind\":\"HostedCluster\",\"name\":\"hc$i\",\"path\":\"$(hc_path "$NS" "hc$i")\",\"policy\":\"$p\",\"images\":[\"$REL1\",\"$REL2\"]},"
    for ((j = 1; j <= NP_PER_HC; j++)); do
      npobjs+="{\"kind\":\"NodePool\",\"cluster\":\"hc$i\",\"name\":\"hc$i-np$j\",\"path\":\"$(np_path "$NS" "hc$i-np$j")\",\"policy\":\"$p\",\"images\":[\"$REL1\",\"$REL2\"]},"
    done
    (
      mk_hc "$NS" "hc$i" "policy=$p" >/dev/null || echo "hc$i" >>"$dir/setup-failed"
      for ((j = 1; j <= NP_PER_HC; j++)); do
        model_np "$NS" "hc$i-np$j" "hc$i" 1 "policy=$p" || echo "hc$i-np$j" >>"$dir/setup-failed"
      done
    ) &
    [ $((i % 4)) -eq 0 ] && wait
  done
  wait
  check_eq "every HostedCluster and NodePool created" "" "$(tr '\n' ' ' <"$dir/setup-failed")"
  echo "# $N_HC HostedClusters and $((N_HC * NP_PER_HC)) NodePools created in $((($(now_us) - t_setup) / 1000)) ms"
  plan=$dir/plan.json
  python3 "$PY" plan "$SEED" "$t0" "$DAYS" "[$objs${npobjs%,}]" >"$plan" || { not_ok "plan"; return; }
  echo "# $(jq length "$plan") requests planned (seed $SEED)"
  receivers_start "$dir" "$port" 0
  # The client's rate limit is real time: at 8640x its default (20/s)
  # would let through a simulated hour's writes in 0.4 s of the clock's
  # 7 minutes, and a window's releases would queue behind the Events of
  # the windows closing at the same instant; raised so that the clock, not
  # the limit, is what the run measures.
  MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-month.yaml" --kube-api-qps 1000 --kube-api-burst 2000)
  # The model runs MODEL_WORKERS reconciles at once, as HyperShift's and
  # Cluster API's controllers do: one at a time, a window's opening (a
  # release and status writes on every object of a policy) queues its
  # reconciles for seconds, which at this clock is longer than a window,
  # and a NodePool's rollout would start after its window closed.
  model_scenario "$NS" "$start" "$SCALE" "$hcs" --hc-status --nodepool-updating-version \
    --workers "$MODEL_WORKERS" || return
  local t_run
  t_run=$(now_us)
  SIM0=$t0 T0_US=${CTL_T0[a]} SCALE=$SCALE E_SERVER=$E_SERVER E_CA=$E_CA ADMIN_TOKEN=$ADMIN_TOKEN \
    python3 "$PY" drive "$plan" "$dir/done.json" 2>"$dir/drive.err" &
  DRIVER_PID=$!
  # The receiver is down for day 10; the controller is killed at day 15
  # 12:00 and stopped with SIGTERM and started again at day 22 12:00.
  down0=$((t0 + 9 * 86400)) down1=$((t0 + 10 * 86400)) restart=$((t0 + 14 * 86400 + 43200))
  term=$((t0 + 21 * 86400 + 43200))
  # A shorter run: the receiver down on day 2, the kill two days later
  # (the backoff runs in real time: at this clock a retry waits up to a
  # simulated day, and a kill before it would drop what the queue held).
  if [ "$DAYS" -lt 16 ]; then
    down0=$((t0 + 86400)) down1=$((t0 + 2 * 86400)) restart=$((t0 + 4 * 86400))
    term=$((t0 + 7 * 86400))
  fi
  sleep_until_sim a "$(rfc3339 "$down0")"
  receivers_stop
  echo "# receiver down at $(rfc3339 "${down0}") (simulated)"
  sleep_until_sim a "$(rfc3339 "$down1")"
  receivers_start "$dir" "$port" 0
  echo "# receiver up at $(rfc3339 "${down1}")"
  sleep_until_sim a "$(rfc3339 "$restart")"
  local tk
  tk=$(now_us)
  # The notified marks as the kill finds them.
  api GET "$HS/namespaces/$NS/hostedclusters" | jq -c --arg k "$CM/notified" \
    '.items[] | [.metadata.name, .metadata.annotations[$k]]' >"$dir/marks-at-kill.jsonl"
  api GET "$HS/namespaces/$NS/nodepools" | jq -c --arg k "$CM/notified" \
    '.items[] | [.metadata.name, .metadata.annotations[$k]]' >>"$dir/marks-at-kill.jsonl"
  restart_kill || { not_ok "the controller starts again after SIGKILL"; return; }
  echo "# controller killed (SIGKILL) at $(rfc3339 "$restart") and ready again in $((($(now_us) - tk) / 1000)) ms real"
  sleep_until_sim a "$(rfc3339 "$term")"
  tk=$(now_us)
  restart_kill TERM || { not_ok "the controller starts again after SIGTERM"; return; }
  echo "# controller stopped (SIGTERM) at $(rfc3339 "$term") and ready again in $((($(now_us) - tk) / 1000)) ms real (its shutdown: ${CTL_STOP_MS} ms)"
  wait "$DRIVER_PID"
  DRIVER_PID=
  # The last windows open and complete before the month ends; then the
  # queue drains.
  sleep_until_sim a "$(rfc3339 "$end")" 3
  echo "# month ran $((($(now_us) - t_run) / 1000)) ms real at ${SCALE}x"
  python3 "$PY" expect "$dir/done.json" "$t0" "$DAYS" >"$dir/expected.json" || { not_ok "expect"; return; }
  # What HyperShift (the model) reports each object reached: a request
  # whose release a pool never reached, because it went on to the next
  # request's first, has no completion to tell.
  model_records >"$dir/model-record.jsonl" || { not_ok "the model's record"; return; }
  j_out=$(SIM0=$t0 T0_US=$MODEL_T0 SCALE=$SCALE MODEL_RECORD=$dir/model-record.jsonl \
    python3 "$PY" judge "$dir/expected.json" \
    "$dir/posts.jsonl" "$down0" "$down1" "$restart" "$SCALE" "$term") || { not_ok "judge"; return; }
  echo "$j_out" >"$dir/judge.json"
  cp "${CTL_LOG[a]}" "$dir/controller.log"
  # The model's record and the pools as the month left them (their
  # conditions and MachineDeployments), for a look at what was not told.
  cp "$MODEL_LOG" "$dir/model.log" 2>/dev/null
  api GET "$HS/namespaces/$NS/nodepools" >"$dir/nodepools.json" 2>/dev/null
  api GET "$HS/namespaces/$NS/hostedclusters" >"$dir/hostedclusters.json" 2>/dev/null
  k get machinedeployments,machinesets -A -o json >"$dir/capi.json" 2>/dev/null
  # The run's records stay for a look afterwards.
  [ -n "${BENCH_NOTIFY_OUT:-}" ] && mkdir -p "$BENCH_NOTIFY_OUT" && cp -r "$dir" "$BENCH_NOTIFY_OUT/"
  e=$(jq -r .expected <<<"$j_out")
  echo "# judged: $(jq -c 'del(.lost_list, .dup_list, .unexpected_list, .moved_list, .superseded_list)' <<<"$j_out")"
  jq -c '.lost_list[], .dup_list[], .unexpected_list[], .moved_list[], .superseded_list[]' <<<"$j_out" |
    head -20 | sed 's/^/#   /'
  check "requests admitted (none refused)" test "$(jq .refused <<<"$j_out")" -eq 0
  check "notifications expected" test "$e" -gt 0
  check_eq "every expected notification delivered at least once (0 lost)" 0 \
    "$(jq .lost <<<"$j_out")"
  # A step delivered in the moment before a SIGKILL, whose notified mark
  # was not written yet, is sent again after the restart, with the same id
  # (CloudEvents: the receiver can tell it is the same notification).
  # After a SIGTERM the marks of everything delivered are written first.
  xfail "0 duplicates after the SIGKILL" test "$(jq .duplicates_after_restart <<<"$j_out")" -eq 0
  check_eq "0 duplicates after the SIGTERM restart" 0 "$(jq .duplicates_after_term <<<"$j_out")"
  check_eq "0 duplicates other than after a restart" 0 \
    "$(jq '.duplicates - .duplicates_after_restart - .duplicates_after_term' <<<"$j_out")"
  check_eq "0 unexpected notifications" 0 "$(jq .unexpected <<<"$j_out")"
  # The health after each change (DESIGN.md 3.15): HyperShift (the model)
  # leaves every cluster and pool healthy, so no completed change of the
  # month may be found unhealthy after it (its verdicts are logged; the
  # logs of the processes before the restarts were kept).
  local alarms
  alarms=$(cat "$dir"/controller-before-*.log "${CTL_LOG[a]}" 2>/dev/null |
    grep -c "unhealthy after the change")
  figure "health after the change: completed changes found unhealthy after them (false alarms): ${alarms:-0}"
  check_eq "0 false alarms of the health after the change" 0 "${alarms:-0}"
  local dropped
  dropped=$(metric a 'hcp_controller_notifications_total\{endpoint="recv",result="dropped"\}')
  check_eq "the metric counts none dropped" 0 "${dropped:-0}"
  figure "simulated month ($DAYS days at ${SCALE}x, $N_HC HostedClusters + $((N_HC * NP_PER_HC)) NodePools, seed $SEED):" \
    "$(jq -r '"\(.expected) expected (\(.expected_non_completed) held/window-soon/initiated + \(.completed_expected) completed; \(.ambiguous) requests left out as ambiguous), \(.received) received, \(.lost) lost, \(.moved) for a later window (change kept held), \(.superseded) window-soon superseded by the initiated step naming it (the window opened before the controller reached the lead), \(.covered) covered by a shorter lead, \(.again) told again for a later window (let through late, held again), \(.replaced) completed not due (the object went on to the release of its next request first), \(.initial) completed for the first rollout of a new NodePool, \(.duplicates) duplicates (\(.duplicates_after_restart) after the SIGKILL, \(.duplicates_after_term) after the SIGTERM restart; each with the id of its first delivery), \(.not_reached) completions HyperShift did not report within the month (no step due), \(.rehold) told for a later window under a new record (the release written after its window closed and held again), \(.unexpected) unexpected"' <<<"$j_out")"
  figure "notification delay after the step, receiver up ($(jq -r .latency_up_n <<<"$j_out") steps):" \
    "$(jq -r '"p50 \(.latency_up_p50_sim | floor) s / p99 \(.latency_up_p99_sim | floor) s / max \(.latency_up_max_sim | floor) s simulated = p50 \(.latency_up_p50_real * 1000 | floor) ms / p99 \(.latency_up_p99_real * 1000 | floor) ms / max \(.latency_up_max_real * 1000 | floor) ms real"' <<<"$j_out")"
  figure "steps due while the receiver was down: $(jq -r '"\(.latency_down_n), delivered at most \(.latency_down_max_sim / 3600 | . * 10 | floor / 10) h (simulated) after the step"' <<<"$j_out")"
}

# ---- loop ---------------------------------------------------------------------

# loop_run LABEL ENDPOINTS RUN: 10 HostedClusters on a daily 00:00 1h window,
# a release requested on each at noon, held; the window-open -> release
# write delays over BENCH_LOOP_BOUNDARIES boundaries.
LOOP_SCALE=${BENCH_LOOP_SCALE:-7200}
LOOP_BOUNDARIES=${BENCH_LOOP_BOUNDARIES:-5}
loop_run() {
  local label=$1 n_ep=$2 run=${3:-1} what=${4:-endpoints} dir port start t0 i b hcs="" bounds="[" rel res ep=""
  NS=$(new_ns "nloop$n_ep-$run${what:0:1}") || return
  dir=$CTL_TMP/loop$n_ep-$run-$what
  mkdir -p "$dir"
  port=$(free_port)
  start=2026-03-01T06:00:00Z
  t0=$(epoch "$start")
  for ((i = 0; i < n_ep; i++)); do
    if [ "$what" = checks ]; then
      # asked as soon as the release is held (the lead covers the wait);
      # each check a system of its own (an address of its own)
      ep+="{\"name\":\"slow$i\",\"url\":\"http://127.0.0.$((i + 1)):$port/slow$i\",\"timeout\":\"20s\",\"lead\":\"7d\"},"
    else
      ep+="{\"name\":\"slow$i\",\"url\":\"http://127.0.0.1:$port/slow$i\"},"
    fi
  done
  if [ "$n_ep" -gt 0 ]; then
    if [ "$what" = checks ]; then
      printf 'checks: [%s]\n' "${ep%,}" >"$CTL_TMP/guard-loop.yaml"
      for ((i = 1; i < n_ep; i++)); do receivers_start "$dir" "$port" 10 "127.0.0.$((i + 1))"; done
    else
      printf 'notifications:\n  endpoints: [%s]\n' "${ep%,}" >"$CTL_TMP/guard-loop.yaml"
    fi
    receivers_start "$dir" "$port" 10
    MODEL_CTL_ARGS=(--guard-config "$CTL_TMP/guard-loop.yaml")
  else
    MODEL_CTL_ARGS=()
  fi
  must mk_policy "$NS" nightly \
    '{"strategy":"MaintenanceSchedule","maintenanceSchedule":{"timeZone":"UTC","permit":{"recurrence":{"frequency":"Daily"},"startTime":"00:00","duration":"1h"}}}' ||
    return
  for ((i = 1; i <= 10; i++)); do
    must mk_hc "$NS" "hc$i" policy=nightly || return
    hcs+=" hc$i"
  done
  model_scenario "$NS" "$start" "$LOOP_SCALE" "$hcs" --hc-status --controlplane-update-duration 10m ||
    return
  SIM0=$t0 E_SERVER=$E_SERVER E_CA=$E_CA ADMIN_TOKEN=$ADMIN_TOKEN \
    python3 "$PY" watch "$HS/namespaces/$NS/hostedclusters" "$dir/writes.jsonl" 2>"$dir/watch.err" &
  CTL_WATCHES+=($!)
  for ((b = 1; b <= LOOP_BOUNDARIES; b++)); do
    rel=quay.io/openshift-release-dev/ocp-release:4.17.$((b + 3))-x86_64
    sleep_until_sim a "$(rfc3339 $((t0 + (b - 1) * 86400 + 6 * 3600)))"
    for ((i = 1; i <= 10; i++)); do
      res=$(request_release "$(hc_path "$NS" "hc$i")" "$rel" | jq -r .spec.release.image)
      [ "$res" = "$rel" ] && echo "# $label: hc$i let through at once (not held)"
    done
    # The boundary: day b 00:00 on the controller's clock, in real time.
    bounds+=$(awk -v s="${CTL_SIM0[a]}" -v t0="${CTL_T0[a]}" -v k="$LOOP_SCALE" \
      -v x=$((t0 + b * 86400 - 6 * 3600)) 'BEGIN { printf "%.6f,", t0 / 1e6 + (x - s) / k }')
  done
  sleep_until_sim a "$(rfc3339 $((t0 + LOOP_BOUNDARIES * 86400 - 6 * 3600 + 3600)))" 1
  watch_stop
  res=$(python3 "$PY" loop "${bounds%,}]" "$dir/writes.jsonl")
  echo "$res" >"$dir/loop.json"
  [ -n "${BENCH_NOTIFY_OUT:-}" ] && mkdir -p "$BENCH_NOTIFY_OUT" && cp -r "$dir" "$BENCH_NOTIFY_OUT/"
  check_eq "$label: every held release written at its window ($LOOP_BOUNDARIES x 10)" \
    $((LOOP_BOUNDARIES * 10)) "$(jq .n <<<"$res")"
  if [ "$what" = checks ] && [ "$n_ep" -gt 0 ]; then
    # Every held release was asked about by every check, each answer 10 s
    # after the question, before its boundary.
    check_eq "$label: every check asked about every held release" $((LOOP_BOUNDARIES * 10 * n_ep)) \
      "$(wc -l <"$dir/posts.jsonl" 2>/dev/null || echo 0)"
  elif [ "$n_ep" -gt 0 ]; then
    check "$label: notifications in flight at the boundaries" \
      test "$(wc -l <"$dir/posts.jsonl" 2>/dev/null || echo 0)" -gt 0
  fi
  LOOP_RES[$what$n_ep]+="$res,"
  figure "window open -> release write, $label ($(jq -r .n <<<"$res") releases over $LOOP_BOUNDARIES boundaries at ${LOOP_SCALE}x):" \
    "$(jq -r '"p50 \(.p50_ms * 10 | floor / 10) ms / p99 \(.p99_ms * 10 | floor / 10) ms / max \(.max_ms * 10 | floor / 10) ms"' <<<"$res")"
  receivers_stop
}

declare -A LOOP_RES
# Each side BENCH_LOOP_REPEATS times, alternating (so that a change of the
# machine's load falls on both): whether the difference is within the
# run-to-run noise, not two numbers.
LOOP_REPEATS=${BENCH_LOOP_REPEATS:-2}
part_loop() {
  local r res
  LOOP_RES=([endpoints0]="" [endpoints10]="")
  for ((r = 1; r <= LOOP_REPEATS; r++)); do
    # The last run's controller and model are left to run_scenario, which
    # checks that they ran to the end and stops them.
    if [ "$r" -gt 1 ]; then
      stop_all_ctls
      model_stop >/dev/null 2>&1
    fi
    loop_run "0 endpoints (run $r)" 0 "$r"
    stop_all_ctls
    model_stop >/dev/null 2>&1
    loop_run "10 endpoints answering after 10 s (run $r)" 10 "$r"
  done
  res=$(python3 "$PY" noise "[${LOOP_RES[endpoints0]%,}]" "[${LOOP_RES[endpoints10]%,}]") || { not_ok "noise"; return; }
  echo "# noise: $res"
  figure "window open -> release write, 10 slow endpoints vs none ($LOOP_REPEATS runs each," \
    "$(jq -r '"\(.samples[0]) + \(.samples[1]) boundaries): median \(.median_b_ms * 10 | floor / 10) vs \(.median_a_ms * 10 | floor / 10) ms; run medians \(.run_p50_ms_b | map(. * 10 | floor / 10)) vs \(.run_p50_ms_a | map(. * 10 | floor / 10)) ms; difference \(.diff_ms * 10 | floor / 10) ms, run-to-run spread \(.spread_ms * 10 | floor / 10) ms, Mann-Whitney p \(.p * 1000 | floor / 1000): \(if .within_noise then "within noise" else "NOT within noise" end)"' <<<"$res")"
  # A figure, not a check (speed is measured, not asserted).
}

# checks (DESIGN.md 3.15): the same boundaries without pre-start checks and
# with 10 checks that answer 200 after 10 s each, asked when the release is
# held (lead 7d), each side BENCH_LOOP_REPEATS times, alternating. The
# clock runs at BENCH_CHECK_SCALE (3600: the 18 simulated hours from the
# request to the boundary are 18 s, longer than an answer takes). Each check
# listens on an address of its own (127.0.0.1 to 127.0.0.10), as separate
# systems do. A warm-up run comes first and is not counted.
part_checks() {
  local r res LOOP_SCALE=${BENCH_CHECK_SCALE:-3600}
  # A first run on a freshly started instance is slower whatever it runs
  # (caches, connections): one run without checks warms it and is not counted.
  loop_run "warm-up, not counted" 0 0 checks
  stop_all_ctls
  model_stop >/dev/null 2>&1
  LOOP_RES=([checks0]="" [checks10]="")
  for ((r = 1; r <= LOOP_REPEATS; r++)); do
    if [ "$r" -gt 1 ]; then
      stop_all_ctls
      model_stop >/dev/null 2>&1
    fi
    loop_run "0 checks (run $r)" 0 "$r" checks
    stop_all_ctls
    model_stop >/dev/null 2>&1
    loop_run "10 checks answering after 10 s (run $r)" 10 "$r" checks
  done
  res=$(python3 "$PY" noise "[${LOOP_RES[checks0]%,}]" "[${LOOP_RES[checks10]%,}]") || { not_ok "noise"; return; }
  echo "# noise: $res"
  figure "window open -> release write, 10 slow pre-start checks vs none ($LOOP_REPEATS runs each," \
    "$(jq -r '"\(.samples[0]) + \(.samples[1]) boundaries): median \(.median_b_ms * 10 | floor / 10) vs \(.median_a_ms * 10 | floor / 10) ms; run medians \(.run_p50_ms_b | map(. * 10 | floor / 10)) vs \(.run_p50_ms_a | map(. * 10 | floor / 10)) ms; difference \(.diff_ms * 10 | floor / 10) ms, run-to-run spread \(.spread_ms * 10 | floor / 10) ms, Mann-Whitney p \(.p * 1000 | floor / 1000): \(if .within_noise then "within noise" else "NOT within noise" end)"' <<<"$res")"
}

model_suite_begin
trap 'bench_cleanup' EXIT
for part in $PARTS; do
  run_scenario "part_$part"
done
summary
