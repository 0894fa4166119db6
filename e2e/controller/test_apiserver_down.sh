#!/usr/bin/env bash
# End-to-end: the management cluster's kube-apiserver goes away (an upgrade
# of the management cluster restarts it) or its etcd stalls, while releases
# are held. The real API server of the instance is stopped and started
# again on the same etcd, as a restart does; etcd is paused with SIGSTOP and
# resumed with SIGCONT (e2e/cluster.sh etcd-pause). The controller runs as
# the chart runs it (leader election on a Lease, the admission webhooks,
# failurePolicy Fail).
#
# Scenarios, each with CLUSTERS held HostedClusters (default 10):
#   down10, down30, down60  the API server down 10, 30, 60 s across a
#                           window's opening (half before, half after): the
#                           leader steps down after its renew deadline (10 s)
#                           and must lead again;
#   etcd30                  etcd paused 30 s across the opening, with a
#                           held write in flight (it passed our webhook and
#                           waits on storage);
#   in_flight               before the opening: the API server stopped while
#                           it waits on our webhook for a write, then down
#                           20 s, while a client keeps writing a release to
#                           another cluster from the instant it comes back.
#
# What must hold, and the figures:
#   - nothing is lost: every held release goes out once the API server
#     answers again, within 2 s of its first answer (or of the opening, when
#     it answered before), and only once (one generation more);
#   - nothing starts outside a window: no release is written before the
#     opening, whatever the outage did to a write in flight;
#   - the controller stays up, leads again, and its watches resume without
#     a relist storm: the LISTs it makes after the API server came back are
#     counted per watched collection (hcp_controller_watch_list_requests_total):
#     at most one relist each;
#   - the webhooks behave as the chart says: a write the API server could
#     not have checked by our webhook is refused, never let through.
#
# The clocks run in real time (scale 1): an outage is real seconds.
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh (the webhook scenario helpers; no model runs)
. "$here/../model/lib.sh"

INSTANCE=${CTL_E2E_INSTANCE:-main}
CLUSTER_SH=$here/../cluster.sh
OPEN=2026-03-07T01:00:00Z # Saturday's window, 4 h
WH_NAME=hcp-e2e-apidown-$$


CLUSTERS=${APIDOWN_CLUSTERS:-10}

# lists_by A: the controller A's list requests per watched collection, as
# "resource=N" lines.
lists_by() {
  metrics "$1" | awk '/^hcp_controller_watch_list_requests_total\{/ {
    match($0, /resource="[^"]*"/); print substr($0, RSTART + 10, RLENGTH - 11) "=" $2 }' | sort
}
# lists_delta BEFORE AFTER: "resource=N ..." of what grew, all resources.
lists_delta() {
  join -t= -a2 -e0 -o 0,1.2,2.2 <(echo "$1") <(echo "$2") | awk -F= '{ printf "%s%s=%d", sep, $1, $3 - $2; sep = " " }'
}
max_delta() { tr ' ' '\n' <<<"$1" | awk -F= 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }'; }

# poll NS FILE: every 0.1 s, "sent-us|name=image ...|answered-us" of the
# HostedClusters of NS as the API server serves them (a consistent read
# from etcd), and "sent-us||answered-us" when it does not answer within 1 s.
# What a read shows was written before it was answered, and may have been
# written after it was sent: a release counts as seen at the answer, the
# instant curl returned it (taken before jq reads it: on a loaded machine
# jq's start alone takes a few hundred ms).
poll() {
  local t0 t1 body
  while [ ! -e "$CTL_TMP/poll.stop" ]; do
    t0=$(now_us)
    body=$(curl -s --max-time 1 --cacert "$E_CA" -H "Authorization: Bearer $ADMIN_TOKEN" \
      "$E_SERVER$HS/namespaces/$1/hostedclusters" 2>/dev/null)
    t1=$(now_us)
    echo "$t0|$(jq -r '[.items[]? | "\(.metadata.name)=\(.spec.release.image)"] | join(" ")' <<<"$body" 2>/dev/null)|$t1"
    sleep 0.1
  done >"$2"
}
poll_start() { rm -f "$CTL_TMP/poll.stop"; poll "$1" "$2" & POLL_PID=$!; }
poll_stop() { touch "$CTL_TMP/poll.stop"; wait "$POLL_PID" 2>/dev/null; }

# first_release FILE NAME: the real-us of the first answer in which the poll
# saw NAME at REL1 (written before it, so before it is no proof of early).
first_release() { awk -F'|' -v w="$2=$REL1" '{ n = split($2, a, " "); for (i = 1; i <= n; i++) if (a[i] == w) { print $3; exit } }' "$1"; }

# last_seen: what the poll last read.
last_seen() { awk -F'|' '$2 != "" { l = $2 } END { print l }' "$CTL_TMP/poll.log"; }

# down KIND / up KIND: stop or start the API server, or pause or resume etcd.
down() {
  case $1 in
    apiserver) "$CLUSTER_SH" apiserver-stop "$INSTANCE" >/dev/null 2>&1 ;;
    etcd) "$CLUSTER_SH" etcd-pause "$INSTANCE" >/dev/null 2>&1 ;;
  esac
}
up() {
  case $1 in
    apiserver) "$CLUSTER_SH" apiserver-start "$INSTANCE" >"$CTL_TMP/apiserver-start.log" 2>&1 ;;
    etcd) "$CLUSTER_SH" etcd-resume "$INSTANCE" >/dev/null 2>&1 ;;
  esac
}
answers() { curl -s --max-time 2 --cacert "$E_CA" -H "Authorization: Bearer $ADMIN_TOKEN" \
  "$E_SERVER$HS/namespaces/$NS/hostedclusters" 2>/dev/null | jq -e '.items | length > 0' >/dev/null 2>&1; }

# setup NAME N LEAD: a namespace with the holds webhook, the Saturday window
# and N opted-in HostedClusters c1..cN; controller a started LEAD s before
# the opening and leading. Sets NS, WPORT.
setup() {
  local name=$1 n=$2 lead=$3 i
  NS=$(new_ns "apidown-$name") || return 1
  WPORT=$(free_port)
  holds_webhook_config "$WPORT" "$NS" $(for i in $(seq 1 "$n"); do echo "$NS-c$i"; done) |
    k apply -f - >/dev/null || { not_ok "webhook configuration"; return 1; }
  must mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || return 1
  for i in $(seq 1 "$n"); do must mk_hc "$NS" "c$i" policy=weekend || return 1; done
  start_ctl a "$NS" "$(rfc3339 $(($(epoch "$OPEN") - lead)))" 1 --leader-elect \
    --leader-election-namespace "$NS" --webhook-bind-address "127.0.0.1:$WPORT" \
    --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { not_ok "controller starts"; return 1; }
  all_labelled() { for i in $(seq 1 "$n"); do labelled "$(hc_path "$NS" "c$i")" || return 1; done; }
  check "the leader labels the $n opted-in HostedClusters" wait_for 15 all_labelled || return 1
  sleep 2 # the API server's webhook configuration informer
}

# hold_all N: a release written to c1..cN, each held (the request recorded).
hold_all() {
  local i held=0 out
  for i in $(seq 1 "$1"); do
    out=$(request_release "$(hc_path "$NS" "c$i")" "$REL1")
    [ "$(jq -r .spec.release.image <<<"$out")" = "$REL0" ] &&
      [ "$(jq -r --arg k "$CM/requested-release-image" '.metadata.annotations[$k] // ""' <<<"$out")" = "$REL1" ] &&
      held=$((held + 1))
  done
  check_eq "a release before the window is held on each of the $1 clusters" "$1" "$held"
}
gens() { for i in $(seq 1 "$1"); do get "$(hc_path "$NS" "c$i")" .metadata.generation; done | tr '\n' ' '; }

# verdict NAME N T-STOP: the checks and figures after an outage that began
# at T-STOP (real us): every release at or after the opening, within 2 s
# of the API server's first answer (or of the opening), written once, no
# request left recorded, the controller up, the LISTs per collection.
verdict() {
  local name=$1 n=$2 t_stop=$3 t_open t_up ref i t lat=() early=0 missing=0 g1 want p50 p99 mx
  t_open=$(awk -v t="$(ctl_real_at a "$OPEN")" 'BEGIN { printf "%.0f", t * 1e6 }')
  # The API server's first answer after the outage began (an empty line is
  # no answer; a 503 while it starts is not one either): the instant it
  # arrived, as the releases are timed.
  local t_gap
  t_gap=$(awk -F'|' -v t="$t_stop" '$1 > t && $2 == "" { print $1; exit }' "$CTL_TMP/poll.log")
  t_up=$(awk -F'|' -v t="${t_gap:-0}" '$1 > t && $2 != "" { print $3; exit }' "$CTL_TMP/poll.log")
  [ -n "$t_gap" ] && [ -n "$t_up" ] || { not_ok "the poll saw the API server stop answering and answer again"; return; }
  ref=$((t_up > t_open ? t_up : t_open))
  for i in $(seq 1 "$n"); do
    t=$(first_release "$CTL_TMP/poll.log" "c$i")
    if [ -z "$t" ]; then missing=$((missing + 1)); continue; fi
    [ "$t" -ge "$t_open" ] || early=$((early + 1))
    lat+=($(((t - ref) / 1000)))
  done
  check_eq "no held release lost (all $n went out)" 0 "$missing"
  check_eq "no release written before the window" 0 "$early"
  read -r p50 p99 mx < <(printf '%s\n' "${lat[@]}" | sort -n | awk '{ v[NR] = $1 } END {
    i50 = int(NR * 0.5 + 0.999); i99 = int(NR * 0.99 + 0.999); print v[i50], v[i99], v[NR] }')
  echo "# figure: $name: unanswered for $(((t_up - t_gap) / 1000)) ms, from $(((t_open - t_gap) / 1000)) ms before the opening; releases after $([ "$t_up" -lt "$t_open" ] && echo "the opening (the API server answered before it)" || echo "the API server answered again"): p50 $p50 ms, p99 $p99 ms, max $mx ms of $n (load average $(cut -d' ' -f1 /proc/loadavg))"
  check "every release within 2 s of the API server answering again (p99 $p99 ms, max $mx ms)" \
    [ "$mx" -le $((2000 * ${CTL_SLOW:-1})) ]
  g1=$(gens "$n")
  want=$(for g in $GENS0; do echo $((g + 1)); done | tr '\n' ' ')
  check_eq "each written once (one generation more)" "$want" "$g1"
  check_eq "no request left recorded as held" "" "$(for i in $(seq 1 "$n"); do
    get "$(hc_path "$NS" "c$i")" ".metadata.annotations[\"$CM/requested-release-image\"] // empty"; done)"
  check "the controller still runs" ctl_alive a
  check "and leads" wait_for 5 eval '[ "$(metric a hcp_controller_leader)" = 1 ]'
}

# outage NAME KIND SECONDS: CLUSTERS held releases; the API server (KIND
# apiserver) or etcd (KIND etcd) down for SECONDS, half of it before the
# opening.
outage() {
  local name=$1 kind=$2 secs=$3 before t_stop t_gone l0 l1 d w_pid w_code
  before=$((secs / 2))
  setup "$name" "$CLUSTERS" $((before + 25)) || return
  hold_all "$CLUSTERS"
  GENS0=$(gens "$CLUSTERS")
  l0=$(lists_by a)
  check "the lists are counted per watched collection (hostedclusters and nodepools listed: $(echo $l0))" \
    eval 'grep -q "^hostedclusters=[1-9]" <<<"$l0" && grep -q "^nodepools=[1-9]" <<<"$l0"'
  poll_start "$NS" "$CTL_TMP/poll.log"
  sleep_until_sim a "$(rfc3339 $(($(epoch "$OPEN") - before)))"
  t_stop=$(now_us)
  down "$kind" # a stopped API server first drains what it serves (up to 5 s)
  t_gone=$(now_us)
  check "$kind down: the API server does not answer" eval '! answers'
  if [ "$kind" = etcd ]; then
    # A client's release write in flight (c1's, written again as a client
    # that retries does): it passes our webhook while the window is closed
    # (held) and waits on storage; the leader's release at the opening
    # waits too. Whichever etcd takes first, c1 goes out once, at the window.
    curl -s -o /dev/null -w '%{http_code}' --max-time 60 --cacert "$E_CA" -X PATCH \
      -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/merge-patch+json" \
      --data-binary "{\"spec\":{\"release\":{\"image\":\"$REL1\"}}}" \
      "$E_SERVER$(hc_path "$NS" c1)" >"$CTL_TMP/inflight.code" 2>/dev/null &
    w_pid=$!
  fi
  # SECONDS from the instant it stopped answering: the opening falls in it.
  sleep "$(awk -v g="$t_gone" -v n="$(now_us)" -v s="$secs" 'BEGIN { d = s - (n - g) / 1e6; printf "%.3f", (d > 0 ? d : 0) }')"
  up "$kind" || { not_ok "$kind comes back" "$(tail -3 "$CTL_TMP/apiserver-start.log" 2>/dev/null)"; return; }
  released_all() { [ "$(last_seen | grep -o "=$REL1" | wc -l)" -eq "$CLUSTERS" ]; }
  check "the held releases go out once the API server answers" wait_for 60 released_all
  sleep 2
  poll_stop
  if [ "$kind" = etcd ]; then
    wait "$w_pid" 2>/dev/null
    w_code=$(cat "$CTL_TMP/inflight.code" 2>/dev/null)
    echo "# figure: $name: the write in flight while etcd was paused ended with HTTP $w_code"
    check "the write in flight completed once etcd resumed (HTTP $w_code)" [ "$w_code" = 200 ]
  fi
  verdict "$name" "$CLUSTERS" "$t_stop"
  l1=$(lists_by a)
  d=$(lists_delta "$l0" "$l1")
  echo "# figure: $name: LISTs after the outage, per collection: $d"
  check "no relist storm: at most one list per watched collection ($d)" [ "$(max_delta "$d")" -le 1 ]
  stop_ctl a
  k delete mutatingwebhookconfiguration "$WH_NAME" --ignore-not-found >/dev/null 2>&1
}

down10() { outage down10 apiserver 10; }
down30() { outage down30 apiserver 30; }
down60() { outage down60 apiserver 60; }
etcd30() { outage etcd30 etcd 30; }

# Before the opening: a client's write of a release to c1 waits on our
# webhook (the controller is stopped with SIGSTOP, so its answer is late)
# when the API server is stopped; the API server is down 20 s; from the
# instant it is started again a client (OCM, Argo CD: they retry) writes a
# release to c2 every 0.05 s until one is accepted. Neither may go out
# before the opening; both go out at it.
in_flight() {
  local t_stop code first tries=0 refused=0 out msgs
  setup inflight 2 50 || return
  GENS0=$(gens 2)
  poll_start "$NS" "$CTL_TMP/poll.log"
  kill -STOP "${CTL_PID[a]}"
  curl -s -o "$CTL_TMP/inflight.body" -w '%{http_code}' --max-time 60 --cacert "$E_CA" -X PATCH \
    -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/merge-patch+json" \
    --data-binary "{\"spec\":{\"release\":{\"image\":\"$REL1\"}}}" \
    "$E_SERVER$(hc_path "$NS" c1)" >"$CTL_TMP/inflight.code" 2>/dev/null &
  local w_pid=$!
  sleep 1 # the API server calls the webhook, which does not answer yet
  down apiserver &
  local d_pid=$!
  t_stop=$(now_us)
  sleep 1
  kill -CONT "${CTL_PID[a]}"
  wait "$d_pid"
  wait "$w_pid" 2>/dev/null
  code=$(cat "$CTL_TMP/inflight.code" 2>/dev/null)
  echo "# figure: in_flight: the write waiting on the webhook when the API server stopped ended with HTTP ${code:-none}: $(jq -r '.message // empty' "$CTL_TMP/inflight.body" 2>/dev/null | cut -c1-160)"
  check "the write in flight did not go out ($REL0 stays)" \
    [ "$(last_seen | grep -c "c1=$REL1")" = 0 ]
  sleep_until_sim a "$(rfc3339 $(($(epoch "$OPEN") - 25)))"
  # The client that writes while the API server starts.
  (while :; do
     out=$(curl -s --max-time 2 --cacert "$E_CA" -X PATCH -H "Authorization: Bearer $ADMIN_TOKEN" \
       -H "Content-Type: application/merge-patch+json" -w '\n%{http_code}' \
       --data-binary "{\"spec\":{\"release\":{\"image\":\"$REL1\"}}}" "$E_SERVER$(hc_path "$NS" c2)" 2>/dev/null)
     code=${out##*$'\n'}
     echo "$code|$(jq -rc '[.spec.release.image // "", .metadata.annotations["'"$CM"'/requested-release-image"] // "", .message // ""] | join("|")' <<<"${out%$'\n'*}" 2>/dev/null)"
     [ "$code" = 200 ] && break
     sleep 0.05
   done >"$CTL_TMP/racer.log") &
  local r_pid=$!
  up apiserver || { not_ok "the API server starts again" "$(tail -3 "$CTL_TMP/apiserver-start.log")"; kill "$r_pid"; return; }
  wait_for 30 eval '! kill -0 '"$r_pid"' 2>/dev/null'
  kill "$r_pid" 2>/dev/null
  tries=$(wc -l <"$CTL_TMP/racer.log")
  refused=$(grep -vc '^200|' "$CTL_TMP/racer.log")
  msgs=$(grep -v '^200|' "$CTL_TMP/racer.log" | awk -F'|' '$1 != "000" { print $1 ": " $4 }' | cut -c1-120 | sort | uniq -c | sort -rn | head -3 | tr '\n' ';')
  echo "# figure: in_flight: the writer racing the restart: $tries tries, $refused not accepted (${msgs:-no answer while down})"
  first=$(grep '^200|' "$CTL_TMP/racer.log" | head -1)
  check_eq "the first write the restarted API server accepted was held (spec stays, request recorded)" \
    "200|$REL0|$REL1|" "$first"
  # The client whose write was refused in flight writes again, as it retries.
  if [ "$code" != 200 ]; then
    release_held "the refused write, written again" "$(hc_path "$NS" c1)" "$REL1" "$REL0"
  fi
  released_both() { [ "$(last_seen | grep -o "=$REL1" | wc -l)" -eq 2 ]; }
  sleep_until_sim a "$OPEN"
  check "both go out at the opening" wait_for 10 released_both
  sleep 1
  poll_stop
  verdict in_flight 2 "$t_stop"
  stop_ctl a
  k delete mutatingwebhookconfiguration "$WH_NAME" --ignore-not-found >/dev/null 2>&1
}

begin_suite
# The API server is started again, and etcd resumed, whatever happened: the
# lane's next suites need them.
trap 'touch "$CTL_TMP/poll.stop" 2>/dev/null; "$CLUSTER_SH" etcd-resume "$INSTANCE" >/dev/null 2>&1; "$CLUSTER_SH" apiserver-start "$INSTANCE" >/dev/null 2>&1; webhook_scenario_cleanup' EXIT
mk_webhook_cert || { not_ok "test certificate"; summary; exit 1; }
run_scenario in_flight
run_scenario down10
run_scenario etcd30
run_scenario down30
run_scenario down60
summary
