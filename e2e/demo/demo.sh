#!/usr/bin/env bash
# The demo behind `make demo`: a simulated week of maintenance windows on the
# local cluster, in about two minutes, with the behaviour model of HyperShift
# and Cluster API (e2e/model) doing what they would do on a management
# cluster, and the controller's admission webhooks holding changes.
#
#   e2e/cluster.sh with main -- e2e/demo/demo.sh
#   e2e/cluster.sh with capi -- env DEMO_SCENARIO=capi e2e/demo/demo.sh
#
# The second is its act on Cluster API's own controllers
# (e2e/demo/scenario-capi.sh): one HostedCluster and a Replace NodePool of
# two machines, whose requests are held until the window and then rolled
# by the real core manager, at 240 times real time. What follows is the
# week (e2e/demo/scenario-week.sh, the default scenario); the scenario file
# has the objects, the clock, the model's flags and the steps, this script
# the rest, for both.
#
# Loads the sample objects of e2e/demo/objects/ with kubectl apply (two
# HostedClusters, four NodePools, the CAPI Clusters, three policies, one of
# them with an exclusion, and an SRE PermissiveUntil override), seeds the
# release status HyperShift would report, and runs hcp-controller (with its
# webhooks, configured as the chart configures them) and the model with one
# simulated clock from Monday 2026-03-02 00:00 UTC. The model creates the
# pools' MachineDeployments and MachineSets and their machines. On Tuesday
# at 12:30 someone asks for release 4.17.1 for HostedClusters prod and
# staging and prod's NodePools prod-workers and prod-infra, and for a new
# configuration of the InPlace pool staging-gpu: the webhooks hold each
# request in the very write that makes it, and nothing starts until the
# window opens. On Wednesday prod-infra's request is reverted in Git (the
# GitOps tool's server-side apply of 4.17.0): it is withdrawn (REVERT, then
# WITHDRAWN), and nothing starts for prod-infra at its window. staging
# is Degraded from Tuesday 19:00 to Wednesday 09:00 (the demo writes
# HyperShift's condition): the health gate skips Tuesday night's window for
# its release, which starts in Wednesday night's. The demo prints every
# transition of a policy, HostedCluster or NodePool as the controller writes
# it (the simulated instant is the start of the new state,
# status.behavior.current.startTime of the policy or of the object's
# HostedChangeManagementStatus), every change it holds (heldChange of the
# HostedChangeManagementStatus, since when), and what the model records as
# started (a control-plane update, a machine replacement, an in-place
# update); it ends with a table of every HostedCluster's and NodePool's
# state, what it runs, when its change started and its next window.
#
# Notifications go to a small receiver of the demo's on 127.0.0.1
# (e2e/demo/receiver.py), named as an endpoint in the guard rails' file the
# chart renders (`notifications.endpoints`, helm template); each CloudEvent
# is printed as it arrives (NOTIFIED: its time, type, subject and message),
# and the demo ends with a count of them by type.
#
# Environment:
#   HCP_BIN         the controller binary (default build/hcp-controller)
#   HCP_MODEL_BIN   the model binary (default: e2e/model/build.sh --path)
#   DEMO_SCENARIO   week (default) or capi
#   DEMO_SECONDS    the week: real seconds the simulated span takes
#                   (default 120)
#   DEMO_DAYS       the week: simulated days (default 7; at least 2, the
#                   requests are made on Tuesday)
#   DEMO_NAMESPACE  namespace of the objects (default demo-clusters); the
#                   control plane namespaces are <namespace>-<cluster>
#                   (prod and staging; edge)
#   DEMO_DIR        where the controller's log and the model's record go
#                   (default build/demo-run)
#   DEMO_INSTANCE   the e2e/cluster.sh instance to use (default: main for
#                   the week, capi for the act)
#   HELM            helm, which renders the guard rails' file (default
#                   node_modules/.bin/helm, from scripts/install-deps.sh)
#
# Reruns are idempotent: the objects are deleted and created again (the
# namespaces are kept: the local cluster has no namespace controller to
# finish deleting one; on "capi" Cluster API's own controllers delete the
# machines of an earlier run). Exit status 0 when the week ran to its end
# (the act: when its machines were replaced, or its window closed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=e2e/lib.sh
. "$repo/e2e/lib.sh"

HCP_BIN=${HCP_BIN:-$repo/build/hcp-controller}
MODEL_BIN=${HCP_MODEL_BIN:-$("$repo/e2e/model/build.sh" --path)}
NS=${DEMO_NAMESPACE:-demo-clusters}
DEMO_DIR=${DEMO_DIR:-$repo/build/demo-run}
DEMO_SCENARIO=${DEMO_SCENARIO:-week}

CM=changemanagement.hypershift.openshift.io
RELEASE_DONE=quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64
RELEASE_NEXT=quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64
HELM=${HELM:-$repo/node_modules/.bin/helm}

die() { echo "demo: $*" >&2; exit 1; }

# The scenario: its objects, its span and clock, its hosted clusters
# (DEMO_CLUSTERS: their control-plane namespaces are <namespace>-<name>),
# what plays Cluster API (DEMO_SOURCE), the model's flags (MODEL_FLAGS),
# and what happens in it (scenario_check, scenario_span, scenario_title,
# scenario_run).
case $DEMO_SCENARIO in
  week | capi) ;;
  *) die "DEMO_SCENARIO \"$DEMO_SCENARIO\" is neither week nor capi" ;;
esac
# shellcheck source=e2e/demo/scenario-week.sh
. "$here/scenario-$DEMO_SCENARIO.sh"
INSTANCE=${DEMO_INSTANCE:-$SCENARIO_INSTANCE}
CP_NS=()
for c in "${DEMO_CLUSTERS[@]}"; do CP_NS+=("$NS-$c"); done

# ---- the transition printer (demo.sh --transitions KUBECONFIG, started with
# setsid below, so that its watches stop with its process group) -------------

# The states of one kind (hostedclusters, nodepools,
# hostedchangemanagementpolicies, hostedchangemanagementstatuses) as
# \x1f-separated fields: the kind watched, the kind and name of the object,
# state, start of the current state, message, ChangesPending reason (empty
# when nothing is pending), ChangesPaused status, the held change:
# summary, since, the next window's start, and the last withdrawal of a
# held request: when, by whom, what. A policy gives its
# status.behavior.current (whose reason names an exclusion while one
# applies); a HostedCluster or NodePool gives its conditions (message,
# pending, paused); its HostedChangeManagementStatus gives its state, when
# it started and its heldChange. Objects without a status yet give just
# their kinds and name.
watch_kind() {
  kubectl --kubeconfig "$KCFG" get "$1" -n "$NS" --watch -o json \
    --request-timeout "$DEMO_WATCH_TIMEOUT" 2>/dev/null |
    jq --unbuffered -r '
      def cond($t): (.status.conditions // []) | map(select(.type == $t)) | .[0] // {};
      if .kind == "HostedChangeManagementPolicy" then
        .status.behavior.current as $c |
        if $c == null then [.kind, .kind, .metadata.name] else
        [.kind, .kind, .metadata.name, $c.state, ($c.startTime // ""),
         "Changes are " + (if $c.state == "ChangesUnpaused" then "permitted" else "paused" end) +
         (if $c.endTime then " until " + $c.endTime else "" end) + " (" + ($c.reason // "") + ").",
         "", ""] end
      elif .kind == "HostedChangeManagementStatus" then
        .status.behavior.current as $c |
        if $c == null then [.kind, .target.kind, .target.name] else
        [.kind, .target.kind, .target.name, $c.state, ($c.startTime // ""), "", "", "",
         (.status.heldChange.summary // ""), (.status.heldChange.since // ""),
         (.status.behavior.next.startTime // ""), (.status.audit.withdrawn.at // ""),
         (.status.audit.withdrawn.by // ""), (.status.audit.withdrawn.what // "")] end
      else
        if .status.conditions == null then [.kind, .kind, .metadata.name] else
        [.kind, .kind, .metadata.name, "", "", cond("ChangesPaused").message // "",
         (cond("ChangesPending") | if .status == "True" then .reason else "" end),
         cond("ChangesPaused").status // ""] end
      end | join("\u001f")'
}

# fmt_time RFC3339: "Tue 2026-03-03 12:00".
fmt_time() { date -u -d "$1" '+%a %Y-%m-%d %H:%M'; }

# emit KEY WHEN KIND NAME WORD TEXT: one line of the transitions section,
# to the merger (merge_lines): KEY orders it ("2026-03-07T01:00|1", the
# simulated minute, then 0 for a request and 1 for the rest), \x1e in TEXT
# starts a continuation line.
emit() {
  printf '%s\t%-26s  %-17s %-16s %-8s  %s\n' "$1" "$2" "$3" "$4" "$5" "$6"
}

# merge_lines HOLD: prints the lines emitted by the printers, the requests
# and the day separators in simulated-time order. The streams arrive with
# different lags (a watch, a record file, this script), so each line waits
# HOLD real seconds and is printed once no line that came later sorts
# before it; at the end of its input everything left is printed. A line
# "<barrier>ID" holds back every line that sorts after it until a line
# "<release>ID" comes (a request in flight: its line goes out with the
# answer).
merge_lines() {
  local hold_us line part="" rc now eof=0 i m out
  hold_us=$(awk -v h="$1" 'BEGIN { printf "%d", h * 1e6 }')
  local -a keys=() texts=() arrived=()
  while [ "$eof" = 0 ] || [ ${#keys[@]} -gt 0 ]; do
    if [ "$eof" = 0 ]; then
      rc=0
      IFS= read -r -t 0.1 line || rc=$?
      # A timeout can fall in the middle of a line (read takes a byte at a
      # time, and a loaded machine may not schedule it for 0.1 s): the part
      # read so far is kept for the next read.
      if [ "$rc" -gt 128 ]; then
        part+=$line
        [ -z "$line" ] || continue
      elif [ "$rc" = 0 ]; then
        line=$part$line part=""
        if [[ ${line#*$'\t'} == "<release>"* ]]; then # a request answered: its barrier goes
          m="<barrier>${line#*$'\t'<release>}"
          for i in "${!keys[@]}"; do [ "${texts[i]}" != "$m" ] || unset "keys[i]" "texts[i]" "arrived[i]"; done
        else
          keys+=("${line%%$'\t'*}") texts+=("${line#*$'\t'}") arrived+=("$(now_us)")
        fi
        continue
      elif [ "$rc" -le 128 ]; then
        eof=1
      fi
    fi
    now=$(now_us)
    # The smallest key of the lines still waiting bounds what may go out.
    m=""
    for i in "${!keys[@]}"; do
      if [ "$eof" = 0 ] && { [ $((now - arrived[i])) -lt "$hold_us" ] || [[ ${texts[i]} == "<barrier>"* ]]; } &&
        { [ -z "$m" ] || [[ ${keys[i]} < $m ]]; }; then
        m=${keys[i]}
      fi
    done
    out=""
    for i in "${!keys[@]}"; do
      [[ ${texts[i]} != "<barrier>"* ]] || [ "$eof" = 1 ] || continue
      if { [ "$eof" = 1 ] || [ $((now - arrived[i])) -ge "$hold_us" ]; } && { [ -z "$m" ] || [[ ! ${keys[i]} > $m ]]; }; then
        [[ ${texts[i]} == "<barrier>"* ]] || out+="${keys[i]}"$'\t'"$i"$'\t'"${texts[i]}"$'\n'
        unset "keys[i]" "texts[i]" "arrived[i]"
      fi
    done
    [ -z "$out" ] || printf '%s' "$out" | sort -t $'\t' -k1,1 -k2,2n | cut -f3- | tr '\036' '\n'
    [ "$eof" = 0 ] || [ ${#keys[@]} -gt 0 ] || break
  done
}

# Prints one line per change of an object's state (paused/unpaused and since
# when); the first state seen is the one at the start of the week. A
# HostedCluster's or NodePool's state comes from its
# HostedChangeManagementStatus and its message from its own conditions, in
# two streams: a line is printed once both say the same (ChangesPaused True
# for a paused state, False for a permitted one). Marks each kind watched in
# $DEMO_DIR/seen.<kind>.
print_transitions() {
  local watched kind name state start msg pending paused held since next wat wby what obj key when at word extra
  declare -A last=() hstate=() hstart=() hnext=() cmsg=() cpend=() cpaused=() lheld=() lwd=()
  while IFS=$'\x1f' read -r watched kind name state start msg pending paused held since next wat wby what; do
    : >"$DEMO_DIR/seen.$watched"
    obj=$kind/$name
    if [ "$watched" = HostedChangeManagementStatus ] && [ "$held" != "${lheld[$obj]:-}" ]; then
      lheld[$obj]=$held
      [ -z "$held" ] ||
        emit "${since:0:16}|1" "$(fmt_time "$since")" "$kind" "$name" HELD \
          "${held//quay.io\/openshift-release-dev\/ocp-release:/}: held, nothing starts before the window at ${next:-(none)}."
    fi
    # A held request withdrawn (a revert of the field, DESIGN.md 3.13).
    if [ "$watched" = HostedChangeManagementStatus ] && [ -n "$wat" ] && [ "$wat" != "${lwd[$obj]:-}" ]; then
      lwd[$obj]=$wat
      emit "${wat:0:16}|1" "$(fmt_time "$wat")" "$kind" "$name" WITHDRAWN \
        "the request for $what is withdrawn by ${wby##*:}: nothing of it starts at the window."
    fi
    case $watched in
      HostedCluster | NodePool) cmsg[$obj]=$msg cpend[$obj]=$pending cpaused[$obj]=$paused ;;
      HostedChangeManagementStatus) [ -n "$state" ] && hstate[$obj]=$state hstart[$obj]=$start hnext[$obj]=$next ;;
      *) [ -n "$state" ] && hstate[$obj]=$state hstart[$obj]=$start cmsg[$obj]=$msg cpend[$obj]="" cpaused[$obj]=any ;;
    esac
    state=${hstate[$obj]:-} start=${hstart[$obj]:-} paused=${cpaused[$obj]:-}
    [ -n "$state" ] || continue
    case $paused in
      any) ;;
      True) [ "$state" != ChangesUnpaused ] || continue ;;
      False) [ "$state" = ChangesUnpaused ] || continue ;;
      *) continue ;;
    esac
    # A condition written for an earlier state (HyperShift's status writes
    # can put one back until the controller re-asserts it) waits.
    [ -z "${hnext[$obj]:-}" ] || [[ ${cmsg[$obj]:-} == *"until ${hnext[$obj]}"* ]] || continue
    key="$state|$start"
    [ "${last[$obj]:-}" = "$key" ] && continue
    if [ -z "${last[$obj]:-}" ]; then
      when="$(fmt_time "$SIM_START") start" at=$SIM_START
    else
      when=$(fmt_time "$start") at=$start
    fi
    last[$obj]=$key
    if [ "$state" = ChangesUnpaused ]; then word=unpaused; else word=PAUSED; fi
    extra=""
    [ -n "${cpend[$obj]:-}" ] && extra=" Pending changes: ${cpend[$obj]}."
    [ "$kind" = HostedChangeManagementPolicy ] && kind=Policy
    emit "${at:0:16}|1" "$when" "$kind" "$name" "$word" "${cmsg[$obj]:-}$extra"
  done
}

# short_images: release images shortened to their tag in the lines read.
short_images() { sed -u 's|quay.io/openshift-release-dev/ocp-release:||g'; }

# version IMAGE: "4.17.1" of a release image.
version() { local v=${1##*:}; echo "${v%-*}"; }

# Prints what the model records as started, one line each: a control-plane
# update (STARTED), a machine replacement (REPLACE, numbered per
# MachineDeployment), an in-place update of a machine (UPDATE). The record
# is the file the model appends to (--record-file).
print_model_events() {
  local at event kind object from to detail name n
  declare -A count=()
  tail -n +1 -s 0.05 -F "$1" 2>/dev/null |
    jq --unbuffered -r 'select(.event == "controlplane-initiation" or .event == "replacement-start"
        or .event == "inplace-update-start") |
      [.at, .event, .kind, .object, (.from // ""), (.to // ""), (.detail // "")] | join("\u001f")' |
    while IFS=$'\x1f' read -r at event kind object from to detail; do
      name=${object#*/}
      count[$object]=$((${count[$object]:-0} + 1))
      n=${count[$object]}
      case $event in
        controlplane-initiation)
          emit "${at:0:16}|1" "$(fmt_time "$at")" "$kind" "$name" STARTED \
            "HyperShift starts rolling the control plane from $(version "$from") to $(version "$to") (model)." ;;
        replacement-start)
          # Real Cluster API picks the old machine to delete only once the
          # new one is ready (the record's "from" is a guess then).
          if [ "$DEMO_SOURCE" = model ]; then
            emit "${at:0:16}|1" "$(fmt_time "$at")" "$kind" "$name" REPLACE \
              "Cluster API starts replacement $n: machine $from -> $to, one at a time (model)."
          else
            emit "${at:0:16}|1" "$(fmt_time "$at")" "$kind" "$name" REPLACE \
              "Cluster API starts replacement $n, one at a time: new machine $to; an old one goes once it is ready ($DEMO_SOURCE)."
          fi ;;
        inplace-update-start)
          emit "${at:0:16}|1" "$(fmt_time "$at")" "$kind" "$name" UPDATE \
            "The in-place upgrader starts updating machine $detail to configuration $to (model)." ;;
      esac
    done
}

# Prints each notification the receiver got (one CloudEvent a line in the
# file it writes), as it arrives: its time (the step's simulated instant),
# type (without the io.openshift.hypershift.changemanagement. prefix),
# subject and message; a pre-start check's question (demoCheckAnswer: what
# the receiver answered, and when) as CHECKED, at the simulated instant of
# the answer (a question asked again is the same CloudEvent, its time the
# first asking's), read from the clocks' start the demo writes to
# $DEMO_DIR/clock once it knows it.
print_notifications() {
  tail -n +1 -s 0.05 -F "$1" 2>/dev/null |
    jq --unbuffered -r '[.time // "", (.type // "" | ltrimstr("io.openshift.hypershift.changemanagement.")),
        .subject // "", .data.kind // "", .data.name // "", .data.message // "",
        (.demoCheckAnswer // {} | if .status then "\(.status) \(.message)" else "" end),
        (.demoCheckAnswer.at // "" | tostring)] | join("\u001f")' 2>/dev/null |
    while IFS=$'\x1f' read -r at type subject kind name msg answer real; do
      [ -n "$at" ] || continue
      if [ -n "$answer" ]; then
        [ -z "$real" ] || ! read -r t0 k s0 <"$DEMO_DIR/clock" 2>/dev/null ||
          at=$(date -u -d "@$(awk -v r="$real" -v t0="$t0" -v k="$k" -v s="$s0" \
            'BEGIN { printf "%d", s + (r - t0 / 1e6) * k }')" +%Y-%m-%dT%H:%M:%SZ)
        emit "${at:0:16}|1" "$(fmt_time "$at")" "$kind" "$name" CHECKED \
          "pre-start check change-board asked about $subject: $msg It answers ${answer% }." |
          short_images
      else
        emit "${at:0:16}|1" "$(fmt_time "$at")" "$kind" "$name" NOTIFIED "$type $subject: $msg" |
          short_images
      fi
    done
}

if [ "${1:-}" = "--transitions" ]; then
  KCFG=$2
  print_model_events "$DEMO_DIR/model-record.jsonl" &
  print_notifications "$DEMO_DIR/notifications.jsonl" &
  { watch_kind hostedchangemanagementpolicies.$CM &
    watch_kind hostedclusters.hypershift.openshift.io &
    watch_kind nodepools.hypershift.openshift.io &
    watch_kind hostedchangemanagementstatuses.$CM &
    wait; } | print_transitions
  exit 0
fi

# ---- checks -------------------------------------------------------------------

{ [[ "$NS" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] && [ ${#NS} -le 50 ]; } ||
  die "DEMO_NAMESPACE \"$NS\" is not a namespace name of at most 50 characters ([a-z0-9-])"
[ -x "$HCP_BIN" ] || die "no controller binary at $HCP_BIN (make build/hcp-controller, or set HCP_BIN)"
[ -x "$MODEL_BIN" ] || die "no behaviour model binary at $MODEL_BIN (make e2e-model-bin, or set HCP_MODEL_BIN)"
for tool in kubectl jq curl setsid ss openssl tail python3; do
  command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-deps.sh)"
done

env_out=$("$repo/e2e/cluster.sh" env "$INSTANCE" 2>/dev/null) ||
  die "instance \"$INSTANCE\" is not set up; run e2e/cluster.sh with $INSTANCE -- $0 (or make demo)"
while IFS='=' read -r k v; do printf -v "E_${k#HCP_E2E_}" '%s' "$v"; done <<<"$env_out"
KCFG=${E_KUBECONFIG:-}
[ -f "$KCFG" ] || die "instance \"$INSTANCE\" has no kubeconfig; run it through e2e/cluster.sh with $INSTANCE --"
k get --raw /readyz >/dev/null 2>&1 ||
  die "instance \"$INSTANCE\" is not serving at ${E_SERVER:-?}; run e2e/cluster.sh with $INSTANCE -- $0 (or make demo)"
scenario_check

# manifests FILE...: the YAML documents of the files, with the namespace
# substituted (demo-clusters -> $NS).
manifests() {
  local f
  for f in "$@"; do
    echo "---"
    sed "s/demo-clusters/$NS/g" "$f"
  done
}

# api PATCH-PATH BODY CONTENT-TYPE: a write to a status subresource (what
# HyperShift and Cluster API would have written), by the instance's admin.
api_patch() {
  local code
  code=$(curl -s -o "$DEMO_DIR/api.out" -w '%{http_code}' --max-time 10 --cacert "$E_CA" \
    -H "Authorization: Bearer $(cat "$E_ADMIN_TOKEN_FILE")" -H "Content-Type: $3" \
    -X PATCH --data-binary "$2" "$E_SERVER$1") || code=000
  [ "$code" -lt 400 ] || die "PATCH $1 failed ($code): $(head -c 400 "$DEMO_DIR/api.out")"
}

# hc_status NAME FILTER [JQ ARGS...]: a merge patch of HostedCluster NAME's
# status, made by the jq FILTER from the object read (HyperShift's own
# writes, as the model makes them); conditional on the resourceVersion read
# and tried again on a conflict (the model writes the same status).
hc_status() {
  local p="$E_SERVER/apis/hypershift.openshift.io/v1beta1/namespaces/$NS/hostedclusters/$1" filter=$2 obj body code i
  shift 2
  for i in $(seq 1 20); do
    obj=$(curl -sf --max-time 10 --cacert "$E_CA" -H "Authorization: Bearer $(cat "$E_ADMIN_TOKEN_FILE")" "$p") ||
      die "GET hostedclusters/${p##*/} failed"
    body=$(jq -c "$@" "{metadata: {resourceVersion: .metadata.resourceVersion}, status: ($filter)}" <<<"$obj")
    code=$(curl -s -o "$DEMO_DIR/api.out" -w '%{http_code}' --max-time 10 --cacert "$E_CA" \
      -H "Authorization: Bearer $(cat "$E_ADMIN_TOKEN_FILE")" -H "Content-Type: application/merge-patch+json" \
      -X PATCH --data-binary "$body" "$p/status") || code=000
    [ "$code" = 409 ] || break
    sleep 0.02
  done
  [ "$code" -lt 400 ] || die "PATCH hostedclusters/${p##*/}/status failed ($code): $(head -c 400 "$DEMO_DIR/api.out")"
}

# hc_health NAME DEGRADED REASON SINCE: HyperShift's Degraded condition on
# HostedCluster NAME, since the simulated instant SINCE, with Available True
# (api/hypershift/v1beta1/hostedcluster_conditions.go), every other
# condition kept.
hc_health() {
  hc_status "$1" '{conditions: ([.status.conditions // [] | .[] | select(.type != "Available" and .type != "Degraded")] + [
        {type: "Available", status: "True", reason: "AsExpected", message: "",
         lastTransitionTime: "2026-03-02T00:00:00Z"},
        {type: "Degraded", status: $d, reason: $r, message: "", lastTransitionTime: $t}])}' \
    --arg d "$2" --arg r "$3" --arg t "$4"
}

# ---- cleanup --------------------------------------------------------------------

CTL_PID="" MODEL_PID="" WATCH_PGID="" MERGE_PID="" SLEEP_PID="" WEBHOOK_NAME="" RECV_PID=""
stop_pid() { # VAR: SIGTERM to the process whose id is in VAR, waits, clears VAR
  [ -n "${!1}" ] || return 0
  kill -TERM "${!1}" 2>/dev/null || true
  wait "${!1}" 2>/dev/null || true
  printf -v "$1" '%s' ""
}
demo_cleanup() {
  [ -z "$SLEEP_PID" ] || kill "$SLEEP_PID" 2>/dev/null || true
  stop_pid MODEL_PID
  stop_pid CTL_PID
  stop_pid RECV_PID
  # failurePolicy Fail: without the controller every held write would be refused.
  [ -z "$WEBHOOK_NAME" ] || k delete mutatingwebhookconfiguration "$WEBHOOK_NAME" \
    --ignore-not-found >/dev/null 2>&1 || true
  if [ -n "$WATCH_PGID" ]; then
    kill -TERM -- "-$WATCH_PGID" 2>/dev/null || true
    wait "$WATCH_PGID" 2>/dev/null || true
    WATCH_PGID=""
  fi
  stop_pid MERGE_PID
}
trap demo_cleanup EXIT
trap 'echo; echo "demo: interrupted" >&2; exit 130' INT
trap 'echo; echo "demo: terminated" >&2; exit 143' TERM

mkdir -p "$DEMO_DIR"
LOG=$DEMO_DIR/controller.log
MODEL_LOG=$DEMO_DIR/model.log
MODEL_REC=$DEMO_DIR/model-record.jsonl
NOTIFY_DIR=$DEMO_DIR/notifications CHECK_DIR=$DEMO_DIR/checks
rm -rf "$NOTIFY_DIR" "$CHECK_DIR"
rm -f "$DEMO_DIR"/seen.* "$DEMO_DIR"/*.pid "$DEMO_DIR"/*.pgid "$LOG" "$MODEL_LOG" "$MODEL_REC" \
  "$DEMO_DIR/model.port" "$DEMO_DIR/notifications.jsonl" "$DEMO_DIR/clock"
mkdir -p "$NOTIFY_DIR" "$CHECK_DIR"

# ---- objects --------------------------------------------------------------------

scenario_span
scenario_title
echo "   in about $DEMO_SECONDS s (time scale $SCALE), namespace $NS on $E_SERVER"

for ns in "$NS" "${CP_NS[@]}"; do
  phase=$(k get namespace "$ns" -o jsonpath='{.status.phase}' 2>/dev/null || true)
  [ "$phase" != Terminating ] ||
    die "namespace $ns is being deleted and this cluster has no namespace controller to finish it; choose another DEMO_NAMESPACE"
done

obj_files=("$OBJECTS"/policy-*.yaml "$OBJECTS"/cluster-*.yaml)
# Start from nothing: delete what an earlier run left (and its Events).
manifests "${obj_files[@]}" | k delete --ignore-not-found --wait -f - >/dev/null 2>"$DEMO_DIR/kubectl.err" ||
  { [ -z "$(k get namespace "$NS" -o name 2>/dev/null)" ] || die "deleting old objects failed: $(cat "$DEMO_DIR/kubectl.err")"; }
k delete events --all -n "$NS" >/dev/null 2>&1 || true
WEBHOOK_NAME=hcp-demo-$NS
k delete mutatingwebhookconfiguration "$WEBHOOK_NAME" --ignore-not-found >/dev/null 2>&1 || true
k delete "hostedchangemanagementstatuses.$CM" --all -n "$NS" >/dev/null 2>&1 || true
scenario_reset

# apply FILE...: kubectl apply of the manifests; prints "N kind" counts.
apply() {
  manifests "$@" | k apply --server-side --field-manager hcp-demo -f - >"$DEMO_DIR/apply.out" \
    2>"$DEMO_DIR/kubectl.err" || die "kubectl apply failed: $(cat "$DEMO_DIR/kubectl.err")"
  grep -v "is deprecated" "$DEMO_DIR/kubectl.err" >&2 || true
  sed 's|^\([^./]*\)[./].* serverside-applied$|\1|' "$DEMO_DIR/apply.out" | sort | uniq -c |
    awk '{ printf "%s%d %s", (NR > 1 ? ", " : ""), $1, $2 } END { print "" }'
}
echo
echo "-- objects (kubectl apply --server-side)"
echo "   applied $(apply "$OBJECTS/namespaces.yaml")"
echo "   applied $(apply "${obj_files[@]}")"

# The release status HyperShift reports: every control plane runs 4.17.0;
# the updates its update service offers, if it has one (scenario_updates).
# (The model writes the pools' Cluster API objects; their status, the
# model's Cluster API half in the week, Cluster API itself in the act.)
for hc in "${DEMO_CLUSTERS[@]}"; do
  api_patch "/apis/hypershift.openshift.io/v1beta1/namespaces/$NS/hostedclusters/$hc/status" \
    "$(jq -nc --arg i "$RELEASE_DONE" --argjson u "$(scenario_updates "$hc")" '[{op: "add", path: "/status", value: {version: {
      desired: {image: $i, version: "4.17.0"}, observedGeneration: 1, availableUpdates: $u,
      history: [{state: "Completed", image: $i, version: "4.17.0", verified: true,
                 startedTime: "2026-02-10T08:00:00Z", completionTime: "2026-02-10T08:40:00Z"}]}}}]')" \
    application/json-patch+json
done
echo "   status seeded: $(scenario_seeded)"
# Each HostedCluster and NodePool with its changeManagement stanza as given
# (spec.changeManagement wins over the annotations).
{
  k get hostedclusters.hypershift.openshift.io -n "$NS" -o json | jq -c '.items[]'
  k get nodepools.hypershift.openshift.io -n "$NS" -o json | jq -c '.items[]'
} | jq -rs --arg cm "$CM/" '.[] |
  def ann: (.metadata.annotations // {}) | to_entries | map(select(.key | startswith($cm)) |
    "\(.key | ltrimstr($cm))=\(.value)");
  (if .spec.changeManagement then "spec.changeManagement: " + (.spec.changeManagement |
     . as $s | ["strategy=\(.strategy)"] + [paths(scalars) as $p | select($p != ["strategy"]) |
     "\($p | map(tostring) | join("."))=\($s | getpath($p))"] | join(" "))
   elif (ann | length) > 0 then "annotations: " + (ann | join(" "))
   else "no changeManagement stanza" end) as $st |
  (if .kind == "HostedCluster" then
     (.status.version.desired.version // "?") as $v | (.spec.release.image | capture(":(?<v>[0-9.]+)").v // "?") as $want |
     "control plane " + $v + (if $want != $v then ", update to " + $want + " pending" else "" end)
   else "in " + .spec.clusterName + ", upgradeType " + .spec.management.upgradeType end) as $what |
  [.kind, .metadata.name, $st, $what] | join("\u001f")' |
  while IFS=$'\x1f' read -r kind name st what; do
    printf '   %-13s %-16s %s; %s\n' "$kind" "$name" "$st" "$what"
  done

# ---- the policies -------------------------------------------------------------------

echo
echo "-- policies: windows in the simulated span (hcp-controller preview)"
for f in "$OBJECTS"/policy-*.yaml; do
  name=$(manifests "$f" | awk '/^metadata:/ { m = 1 } m && /^  name:/ && n == "" { n = $2 } END { print n }')
  tz=$(awk '/timeZone:/ { print $2; exit }' "$f")
  wins=$(manifests "$f" | "$HCP_BIN" preview -f - --from "$SIM_START" --count 40 -o json |
    jq -r --arg until "$SIM_END" '[.windows[] | select(.start < $until) |
      (.start | strptime("%Y-%m-%dT%H:%M:%SZ") | strftime("%a %H:%M")) + "-" +
      (.end | strptime("%Y-%m-%dT%H:%M:%SZ") | strftime("%H:%M"))] |
      if length == 0 then "none" else join(", ") end') ||
    die "hcp-controller preview -f $f failed"
  printf '   %-15s (%s)  %s\n' "$name" "$tz" "$wins"
  manifests "$f" | awk '/^    - fromDate:/ { f = $3 } /^      reason:/ { sub(/^      reason: */, ""); print f ": " $0 }' |
    sed 's/"//g; s/^/                   excluded /'
done
echo "   (UTC; the NodePools intersect their own policy with their HostedCluster's)"

# ---- the controller -----------------------------------------------------------------

echo
echo "-- transitions as the controller writes them, held changes, and what $SOURCE_WORDS starts (simulated time, UTC; release images by their tag)"
printf '%-26s  %-17s %-16s %-8s  %s\n' "WHEN" "KIND" "NAME" "CHANGES" "STATUS MESSAGE"
# A watch outlives the demo by two minutes at most, even if this script is
# killed without its trap running.
DEMO_WATCH_TIMEOUT=$(awk -v s="$DEMO_SECONDS" 'BEGIN { printf "%ds", s + 120 }')
export DEMO_NAMESPACE=$NS DEMO_DIR DEMO_WATCH_TIMEOUT DEMO_SCENARIO
FIFO=$DEMO_DIR/lines.fifo
rm -f "$FIFO"
mkfifo "$FIFO"
merge_lines 1.5 <"$FIFO" &
MERGE_PID=$!
exec 3>"$FIFO"
setsid "$0" --transitions "$KCFG" >&3 &
WATCH_PGID=$!
echo "$WATCH_PGID" >"$DEMO_DIR/watch.pgid"
# The watches have listed the objects before the clock starts.
watching() { [ -e "$DEMO_DIR/seen.HostedChangeManagementPolicy" ] && [ -e "$DEMO_DIR/seen.HostedCluster" ] &&
  [ -e "$DEMO_DIR/seen.NodePool" ]; }
for _ in $(seq 1 100); do
  watching && break
  sleep 0.1
done
watching || die "the watches of policies, HostedClusters and NodePools did not start"

# The admission webhooks as the chart configures them (the five holds,
# objects carrying the opted-in label the controller maintains,
# failurePolicy Fail; the ConfigMap hold is sent the deletions and content
# changes of the ConfigMaps an opted-in NodePool names), limited to the demo's
# namespaces and pointed at the controller on 127.0.0.1 with a certificate
# of the demo's own.
CERT=$DEMO_DIR/webhook.crt KEY=$DEMO_DIR/webhook.key
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 1 -nodes \
  -subj /CN=hcp-controller-webhook -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$KEY" -out "$CERT" 2>/dev/null || die "openssl could not make the webhook certificate"
MPORT=$(free_port)
HPORT=$(free_port "$MPORT")
WPORT=$(free_port "$HPORT")
jq -nc --arg n "$WEBHOOK_NAME" --arg ca "$(base64 -w0 "$CERT")" --arg u "https://127.0.0.1:$WPORT" \
  --argjson ns "$(printf '%s\n' "$NS" "${CP_NS[@]}" | jq -Rnc '[inputs]')" '
  def hook($res; $group): {
    name: ($res + ".changemanagement.hypershift.openshift.io"),
    clientConfig: {url: ($u + "/hold/" + $res), caBundle: $ca},
    rules: [{apiGroups: [$group], apiVersions: ["*"], operations: ["UPDATE"],
             resources: [$res], scope: "Namespaced"}],
    objectSelector: {matchLabels: {"changemanagement.hypershift.openshift.io/opted-in": "true"}},
    namespaceSelector: {matchExpressions: [{key: "kubernetes.io/metadata.name", operator: "In", values: $ns}]},
    failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"],
    timeoutSeconds: 5, reinvocationPolicy: "Never"};
  {apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration",
   metadata: {name: $n},
   webhooks: [hook("hostedclusters"; "hypershift.openshift.io"), hook("nodepools"; "hypershift.openshift.io"),
              hook("machinedeployments"; "cluster.x-k8s.io"), hook("machinesets"; "cluster.x-k8s.io"),
              (hook("configmaps"; "") | .rules[0].apiVersions = ["v1"]
               | .rules[0].operations = ["UPDATE", "DELETE"]
               | .matchConditions = [{name: "content-changed-or-deleted", expression:
                   ("request.operation == \u0027DELETE\u0027" + (["data", "binaryData"]
                    | map(" || (has(object.\(.)) ? [object.\(.)] : []) != (has(oldObject.\(.)) ? [oldObject.\(.)] : [])")
                    | join("")))}])]}' |
  k apply -f - >/dev/null 2>"$DEMO_DIR/kubectl.err" ||
  die "the webhook configuration was refused: $(cat "$DEMO_DIR/kubectl.err")"

# The notification receiver, and the guard rails' file as the chart renders
# it with one endpoint (notifications.endpoints: name and url; the chart's
# default leads, 48h and 1h).
RPORT=$(free_port "$WPORT")
scenario_helm "http://127.0.0.1:$RPORT"
python3 "$here/receiver.py" "$NOTIFY_DIR" "$RPORT" "$CHECK_DIR" >"$DEMO_DIR/notifications.jsonl" \
  2>"$DEMO_DIR/receiver.log" 3>&- &
RECV_PID=$!
[ -x "$HELM" ] || die "no helm at $HELM (scripts/install-deps.sh installs it; or set HELM)"
"$HELM" template hcp "$repo/charts/hcp-controller" --kube-version "$KUBE_VERSION" \
  --set webhook.enabled=true --set "notifications.endpoints[0].name=demo-receiver" \
  --set "notifications.endpoints[0].url=http://127.0.0.1:$RPORT/events" \
  "${SCENARIO_HELM_SETS[@]}" \
  --show-only templates/webhook.yaml 2>"$DEMO_DIR/helm.err" |
  awk '/^  guard-rails.yaml: [|]/ && !done { on = 1; next } on && /^    / { print substr($0, 5); next }
       on { on = 0; done = 1 }' >"$DEMO_DIR/guard-rails.yaml" # reads to the end: helm is not cut off
grep -q "demo-receiver" "$DEMO_DIR/guard-rails.yaml" ||
  die "helm did not render the guard rails' file: $(head -c 400 "$DEMO_DIR/helm.err")"
for _ in $(seq 1 100); do
  port_free "$RPORT" || break
  kill -0 "$RECV_PID" 2>/dev/null || die "the notification receiver exited: $(cat "$DEMO_DIR/receiver.log")"
  sleep 0.05
done

"$HCP_BIN" run --kubeconfig "$KCFG" --namespace "$NS" \
  --simulated-start-time "$SIM_START" --time-scale "$SCALE" \
  --guard-config "$DEMO_DIR/guard-rails.yaml" \
  --metrics-bind-address "127.0.0.1:$MPORT" --health-probe-bind-address "127.0.0.1:$HPORT" \
  --webhook-bind-address "127.0.0.1:$WPORT" --webhook-cert-file "$CERT" --webhook-key-file "$KEY" \
  >"$LOG" 2>&1 3>&- &
CTL_PID=$!
echo "$CTL_PID" >"$DEMO_DIR/controller.pid"
# T_LAUNCH: the real instant the controller's simulated clock reads
# SIM_START (microseconds), read from its "hcp-controller started" log
# line, which it writes as its clock starts; the model and this script
# share that clock.
started=""
for _ in $(seq 1 400); do
  started=$(sed -n '/hcp-controller started/{s/^\([0-9T:.-]*Z\) .*/\1/p;q}' "$LOG" 2>/dev/null)
  [ -z "$started" ] && kill -0 "$CTL_PID" 2>/dev/null || break
  sleep 0.02
done
[ -n "$started" ] || { tail -20 "$LOG" >&2; die "the controller did not start (log: $LOG)"; }
T_LAUNCH=$(date -u -d "$started" +%s%6N)
echo "$T_LAUNCH $SCALE $(date -u -d "$SIM_START" +%s)" >"$DEMO_DIR/clock"
# HyperShift (and Cluster API, in the week): the model, on the
# controller's clock, with the scenario's flags.
"$MODEL_BIN" --kubeconfig "$KCFG" --namespace "$NS" --simulated-start-time "$SIM_START" \
  --time-scale "$SCALE" --clock-anchor "${T_LAUNCH:0:-6}.${T_LAUNCH: -6}" --hc-status \
  "${MODEL_FLAGS[@]}" --record-file "$MODEL_REC" --port-file "$DEMO_DIR/model.port" \
  >"$DEMO_DIR/model.summary" 2>"$MODEL_LOG" 3>&- &
MODEL_PID=$!
echo "$MODEL_PID" >"$DEMO_DIR/model.pid"
ready=""
for _ in $(seq 1 200); do
  kill -0 "$CTL_PID" 2>/dev/null && kill -0 "$MODEL_PID" 2>/dev/null || break
  curl -sf --max-time 1 "http://127.0.0.1:$HPORT/readyz" >/dev/null 2>&1 &&
    [ -s "$DEMO_DIR/model.port" ] && { ready=1; break; }
  sleep 0.05
done
[ -n "$ready" ] || { tail -20 "$LOG" "$MODEL_LOG" >&2; die "the controller or the model did not become ready (logs: $LOG, $MODEL_LOG)"; }

alive() {
  kill -0 "$CTL_PID" 2>/dev/null || { tail -20 "$LOG" >&2; die "the controller exited early (log: $LOG)"; }
  kill -0 "$MODEL_PID" 2>/dev/null || { tail -20 "$MODEL_LOG" >&2; die "the model exited early (log: $MODEL_LOG)"; }
}

# send_request KIND PLURAL NAME PATCH WHAT: someone's merge patch of a
# HostedCluster or NodePool (as OCM would write it), printed with what the
# API server answered: the webhook's warning says what it held. With
# REQUEST_APPLY=MANAGER it is a server-side apply of that field manager
# instead (as a GitOps tool writes it), by REQUEST_AS (impersonated) when
# set, printed as a REVERT.
send_request() {
  local code at text=$5 w ct=application/merge-patch+json query="" word=REQUEST
  local -a as=()
  if [ -n "${REQUEST_APPLY:-}" ]; then
    ct=application/apply-patch+yaml query="?fieldManager=$REQUEST_APPLY&force=true" word=REVERT
  fi
  [ -z "${REQUEST_AS:-}" ] || as=(-H "Impersonate-User: $REQUEST_AS" -H "Impersonate-Group: system:masters")
  at=$(date -u -d "@$(demo_sim_now)" +%Y-%m-%dT%H:%M:%SZ)
  printf '%s|0\t<barrier>%s\n' "${at:0:16}" "$3" >&3
  code=$(curl -s -o "$DEMO_DIR/request-$3.out" -D "$DEMO_DIR/request-$3.headers" -w '%{http_code}' \
    --max-time 10 --cacert "$E_CA" -H "Authorization: Bearer $(cat "$E_ADMIN_TOKEN_FILE")" "${as[@]}" \
    -H "Content-Type: $ct" -X PATCH --data-binary "$4" \
    "$E_SERVER/apis/hypershift.openshift.io/v1beta1/namespaces/$NS/$2/$3$query") || code=000
  [ "$code" -lt 400 ] || die "PATCH $2/$3 failed ($code): $(head -c 400 "$DEMO_DIR/request-$3.out")"
  while IFS= read -r w; do
    text+=$'\x1e'$(printf '%28s%-17s %-16s %-8s  %s' "" "" "" "" "webhook: $w")
  done < <(sed -n 's/^[Ww]arning: [0-9]* - "\(.*\)"\r*$/\1/p' "$DEMO_DIR/request-$3.headers" | short_images)
  emit "${at:0:16}|0" "$(fmt_time "$at")" "$1" "$3" "$word" "$text" >&3
  printf 'x\t<release>%s\n' "$3" >&3
}

# ask_release KIND NAME: someone asks for RELEASE_NEXT for HostedCluster
# NAME's control plane or NodePool NAME's nodes (send_request, in the
# background: people ask at once, each answer comes back on its own); its
# pid joins REQUEST_PIDS, which requests_answered waits for.
REQUEST_PIDS=()
ask_release() {
  local plural=nodepools what="for the nodes (Replace: new machines)"
  [ "$1" = NodePool ] || plural=hostedclusters what="for the control plane"
  send_request "$1" "$plural" "$2" "{\"spec\": {\"release\": {\"image\": \"$RELEASE_NEXT\"}}}" \
    "someone asks for release $(version "$RELEASE_NEXT") $what" &
  REQUEST_PIDS+=($!)
}
requests_answered() {
  local p
  for p in "${REQUEST_PIDS[@]}"; do wait "$p" || die "a request failed"; done
  REQUEST_PIDS=()
}

kind_of() { case $1 in hostedclusters.*) echo HostedCluster ;; *) echo NodePool ;; esac; }
# demo_sim_now: the simulated clock now (epoch seconds), as the controller and
# the model read it.
demo_sim_now() {
  awk -v s="$(date -u -d "$SIM_START" +%s)" -v t="$(now_us)" -v t0="$T_LAUNCH" -v k="$SCALE" \
    'BEGIN { printf "%d", s + (t - t0) / 1e6 * k }'
}

# sleep_in_wait SECONDS: sleeps in the background and waits for it, so that
# a signal runs its trap at once (and demo_cleanup stops the sleep).
sleep_in_wait() {
  sleep "$1" &
  SLEEP_PID=$!
  wait "$SLEEP_PID"
  SLEEP_PID=""
}

# sleep_until_instant RFC3339: until the simulated clock reads that instant.
sleep_until_instant() {
  local d
  d=$(awk -v r="$(date -u -d "$1" +%s)" -v n="$(demo_sim_now)" -v k="$SCALE" \
    'BEGIN { d = (r - n) / k; printf "%.3f", (d > 0 ? d : 0) }')
  sleep_in_wait "$d"
  alive
}

scenario_run
sleep 0.5
stop_pid MODEL_PID
kill -TERM "$CTL_PID"
wait "$CTL_PID" || die "the controller exited with status $? (log: $LOG)"
CTL_PID=""
k delete mutatingwebhookconfiguration "$WEBHOOK_NAME" --ignore-not-found >/dev/null 2>&1 || true
WEBHOOK_NAME=""
sleep 0.5
kill -TERM -- "-$WATCH_PGID" 2>/dev/null || true
wait "$WATCH_PGID" 2>/dev/null || true
WATCH_PGID=""
exec 3>&-
wait "$MERGE_PID" 2>/dev/null || true
MERGE_PID=""
stop_pid RECV_PID
echo "   -- $(fmt_time "$SIM_END") UTC: end of the simulated span, controller and model stopped"

# ---- the table --------------------------------------------------------------------

echo
echo "-- state at the end (HostedChangeManagementStatus; PAUSED is the CAPI object's cluster.x-k8s.io/paused;"
echo "   RUNNING is the control plane's release or the pool's machines' (without the \"v\" Cluster API's webhook adds),"
echo "   STARTED the model's first start of a change)"
capi=$(for cp in "${CP_NS[@]}"; do
  k get -n "$cp" clusters.cluster.x-k8s.io,machinedeployments.cluster.x-k8s.io,machinesets.cluster.x-k8s.io \
    -o json 2>/dev/null | jq -c '.items[]'
done | jq -sc '.')
machines=$(for cp in "${CP_NS[@]}"; do scenario_machines "$cp"; done | jq -sc '.')
starts=$(jq -sc '[.[] | select(.event == "controlplane-initiation" or .event == "replacement-start"
  or .event == "inplace-update-start")]' "$MODEL_REC" 2>/dev/null || echo '[]')
companions=$(k get "hostedchangemanagementstatuses.$CM" -n "$NS" -o json | jq -c '.items')
{
  k get hostedclusters.hypershift.openshift.io -n "$NS" -o json | jq -c '.items[]'
  k get nodepools.hypershift.openshift.io -n "$NS" -o json | jq -c '.items[]'
} | jq -rs --argjson capi "$capi" --argjson comp "$companions" --arg cm "$CM" \
  --argjson machines "$machines" --argjson starts "$starts" '
  def t: strptime("%Y-%m-%dT%H:%M:%SZ") | mktime;
  def day: strptime("%Y-%m-%dT%H:%M:%SZ") | strftime("%a %Y-%m-%d %H:%M");
  def hm: strptime("%Y-%m-%dT%H:%M:%SZ") | strftime("%H:%M");
  def span($s; $e): ($s | day) + " - " +
    (if $e == null then "(no end)" elif ($e | t) - ($s | t) < 86400 then ($e | hm) else ($e | day) end);
  def capi_of: .metadata.namespace as $ns |
    if .kind == "HostedCluster" then {kind: "Cluster", ns: ($ns + "-" + .metadata.name), name: .spec.infraID}
    else {kind: (if .spec.management.upgradeType == "InPlace" then "MachineSet" else "MachineDeployment" end),
          ns: ($ns + "-" + .spec.clusterName), name: .metadata.name} end;
  def pausedness($o): ($capi | map(select(.kind == $o.kind and .metadata.namespace == $o.ns and
      .metadata.name == $o.name)) | .[0]) as $c |
    if $c == null then "missing"
    elif ($c.metadata.annotations // {})["cluster.x-k8s.io/paused"] == null then "no"
    elif ($c.metadata.annotations // {})[$cm + "/paused-by"] == "hcp-controller" then "yes"
    else "yes (not by hcp-controller)" end;
  def running($o): if .kind == "HostedCluster" then
      (.status.version.history[0] // {}) | "\(.version // "?") \(.state // "")"
    else [$machines[] | select(.metadata.namespace == $o.ns and
        (.metadata.labels["cluster.x-k8s.io/deployment-name"] == $o.name or
         (.metadata.labels["cluster.x-k8s.io/deployment-name"] == null and
          .metadata.labels["cluster.x-k8s.io/set-name"] == $o.name))) |
        (.data.version | ltrimstr("v")) + (if $o.kind == "MachineSet" then " config " + (.data.config // "?") else "" end)] |
      group_by(.) | map("\(length)x \(.[0])") | join(", ") | if . == "" then "no machines" else . end end;
  def started($o): (if .kind == "HostedCluster" then .metadata.namespace + "/" + .metadata.name
      else $o.ns + "/" + $o.name end) as $k |
    [$starts[] | select(.object == $k) | .at] | sort | if length == 0 then "-" else
      (.[0] | sub("\\.[0-9]+Z$"; "Z") | day) end;
  ["KIND", "NAMESPACE/NAME", "STRATEGY", "STATE", "PAUSED", "CAPI OBJECT", "RUNNING", "STARTED (MODEL)",
   "NEXT WINDOW (UTC)", "MESSAGE"],
  (.[] | .kind as $k | .metadata.name as $n |
    ($comp | map(select(.target.kind == $k and .target.name == $n)) | .[0].status // {}) as $st |
    {strategy: $st.strategy, current: $st.behavior.current, next: $st.behavior.next} as $s |
    capi_of as $o |
    ((.status.conditions // []) | map(select(.type == "ChangesPaused")) | .[0].message // "") as $msg |
    [.kind, .metadata.namespace + "/" + .metadata.name, ($s.strategy // "?"),
     (if $s.current.state == "ChangesUnpaused" then "permitted" elif $s.current.state then "restricted" else "?" end),
     pausedness($o), $o.kind + " " + $o.name, running($o), started($o),
     (if $s.current.state == "ChangesUnpaused" then "open now, until " + (if $s.current.endTime then ($s.current.endTime | day) else "(no end)" end)
      elif $s.next.state == "ChangesUnpaused" then span($s.next.startTime; $s.next.endTime)
      else "none within 10 years" end),
     $msg]) | join("\u001f")' |
  awk -F '\x1f' '{ row[NR] = $0; for (i = 1; i < NF; i++) if (length($i) > w[i]) w[i] = length($i) }
    END { for (r = 1; r <= NR; r++) { n = split(row[r], f, "\x1f"); line = ""
            for (i = 1; i < n; i++) line = line sprintf("%-" w[i] "s  ", f[i])
            print line f[n] } }'

echo
k get events -n "$NS" -o json |
  jq -r '[.items[] | select(.source.component == "hcp-controller") | .reason] | group_by(.) |
    map("\(.[0]) \(length)") | "-- Events by hcp-controller: " + (if length == 0 then "none" else join(", ") end)'
jq -rs 'map(select(.demoCheckAnswer | not) | .type | ltrimstr("io.openshift.hypershift.changemanagement.") |
    rtrimstr(".v1")) | group_by(.) |
    map("\(.[0]) \(length)") | "-- notifications received: " + (if length == 0 then "none" else join(", ") end)' \
  "$DEMO_DIR/notifications.jsonl" 2>/dev/null || echo "-- notifications received: none"
jq -rs 'map(select(.demoCheckAnswer) | .demoCheckAnswer.status) | group_by(.) | map("\(.[0]) \(length)") |
    "-- pre-start checks asked: " + (if length == 0 then "none" else "answered " + join(", ") end)' \
  "$DEMO_DIR/notifications.jsonl" 2>/dev/null || echo "-- pre-start checks asked: none"
echo "-- controller log: $LOG"
