#!/usr/bin/env bash
# End-to-end: the management cluster's kube-apiserver goes away across a
# window's opening (an upgrade of the management cluster restarts it), while
# a release is held. The real API server of the instance is stopped a few
# seconds before the opening and started again after it, on the same etcd,
# as a restart does; the controller runs as the chart runs it (leader
# election on a Lease, the admission webhooks).
#
# What must hold, and the figures:
#   - nothing is lost: the held release goes out once the API server answers
#     again, within 2 s of its first answer (the client asks /readyz twice a
#     second while it gets no answer, and the leader then decides every
#     object at once: docs/architecture.md, "Transport"), and only once (one
#     generation more);
#   - nothing starts outside a window: the release is not written before
#     the opening;
#   - the controller stays up, leads again, and its watches resume without
#     a relist storm: the LISTs it makes after the API server came back are
#     counted (at most one per watched collection: a watch resumes from its
#     resourceVersion on the same etcd).
#
# Two outages: SHORT (down 3 s before the opening to 3 s after: within the
# Lease's renew deadline of 10 s, the leader stays the leader) and LONG
# (8 s before to 12 s after: the leader steps down at 10 s and must lead
# again). The clocks run in real time (scale 1): an outage is real seconds.
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


# lists A: the controller A's LIST requests answered so far.
lists() {
  metrics "$1" | awk '/^hcp_controller_api_requests_total\{/ && /verb="list"/ && /code="200"/ { n += $2 } END { print n + 0 }'
}

# outage NAME DOWN-BEFORE UP-AFTER: a held release; the API server stopped
# DOWN-BEFORE s before the opening and started UP-AFTER s after it.
outage() {
  local name=$1 before=$2 after=$3 lead=25 ns gen0 gen1 l0 l1 t_stop t_up t_write t_open poll_pid ms
  ns=$(new_ns "apidown-$name") || return
  NS=$ns
  WPORT=$(free_port)
  holds_webhook_config "$WPORT" "$ns" "$ns-a" | k apply -f - >/dev/null ||
    { not_ok "$name: webhook configuration"; return; }
  must mk_policy "$ns" weekend "$(weekly_policy Saturday 01:00 4h)" || return
  must mk_hc "$ns" a policy=weekend || return
  start_ctl a "$ns" "$(rfc3339 $(($(epoch "$OPEN") - lead)))" 1 --leader-elect \
    --leader-election-namespace "$ns" --webhook-bind-address "127.0.0.1:$WPORT" \
    --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { not_ok "$name: controller starts"; return; }
  check "$name: the leader labels the opted-in HostedCluster" wait_for 10 labelled "$(hc_path "$ns" a)"
  sleep 2 # the API server's webhook configuration informer
  release_held "$name: a release before the window" "$(hc_path "$ns" a)" "$REL1" "$REL0"
  gen0=$(get "$(hc_path "$ns" a)" .metadata.generation)
  l0=$(lists a)
  rm -f "$CTL_TMP/poll.stop"
  (while [ ! -e "$CTL_TMP/poll.stop" ]; do
     echo "$(now_us)|$(get "$(hc_path "$ns" a)" .spec.release.image)"
     sleep 0.05
   done >"$CTL_TMP/poll.log") &
  poll_pid=$!
  sleep_until_sim a "$(rfc3339 $(($(epoch "$OPEN") - before)))"
  "$CLUSTER_SH" apiserver-stop "$INSTANCE" >/dev/null 2>&1
  t_stop=$(now_us) # stopped: it drains its requests first
  check "$name: the API server is down" eval '! get "$(hc_path "$ns" a)" .metadata.name | grep -q a'
  sleep_until_sim a "$(rfc3339 $(($(epoch "$OPEN") + after)))"
  "$CLUSTER_SH" apiserver-start "$INSTANCE" >"$CTL_TMP/apiserver-start.log" 2>&1 ||
    { not_ok "$name: the API server starts again" "$(tail -3 "$CTL_TMP/apiserver-start.log")"; return; }
  released() { [ "$(get "$(hc_path "$ns" a)" .spec.release.image)" = "$REL1" ]; }
  check "$name: the held release goes out once the API server answers" wait_for 30 released
  sleep 2
  touch "$CTL_TMP/poll.stop"
  wait "$poll_pid" 2>/dev/null
  echo "$(now_us)|$(get "$(hc_path "$ns" a)" .spec.release.image)" >>"$CTL_TMP/poll.log"
  t_open=$(ctl_real_at a "$OPEN")
  t_open=$(awk -v t="$t_open" 'BEGIN { printf "%.0f", t * 1e6 }')
  # The API server's first answer after the stop, and the first read of the release.
  # (an answer that is not the object, a 503 while the API server starts, is not one)
  t_up=$(awk -F'|' -v t="$t_stop" '$1 > t && $2 ~ /^quay/ { print $1; exit }' "$CTL_TMP/poll.log")
  t_write=$(awk -F'|' -v r="$REL1" '$2 == r { print $1; exit }' "$CTL_TMP/poll.log")
  [ -n "$t_up" ] && [ -n "$t_write" ] || { not_ok "$name: the poll saw the API server back and the release"; return; }
  check "$name: the release was not written before the window" [ "$t_write" -ge "$t_open" ]
  ms=$(((t_write - t_up) / 1000))
  echo "# figure: $name outage: API server down $(((t_up - t_stop) / 1000)) ms (from $before s before the opening); release $ms ms after its first answer, $(((t_write - t_open) / 1000)) ms after the opening (load average $(cut -d' ' -f1 /proc/loadavg))"
  check "$name: the release within 2 s of the API server's first answer ($ms ms)" \
    [ "$ms" -le $((2000 * ${CTL_SLOW:-1})) ]
  gen1=$(get "$(hc_path "$ns" a)" .metadata.generation)
  check_eq "$name: written once (one generation more)" $((gen0 + 1)) "$gen1"
  check_eq "$name: the request is no longer recorded as held" "" \
    "$(get "$(hc_path "$ns" a)" ".metadata.annotations[\"$CM/requested-release-image\"] // \"\"")"
  check "$name: the controller still runs" ctl_alive a
  l1=$(lists a)
  echo "# figure: $name outage: LISTs after the API server came back: $((l1 - l0))"
  check "$name: no relist storm ($((l1 - l0)) LISTs after the outage, at most 12)" [ $((l1 - l0)) -le 12 ]
  stop_ctl a
  k delete mutatingwebhookconfiguration "$WH_NAME" --ignore-not-found >/dev/null 2>&1
}

short_outage() { outage short 3 3; }
long_outage() { outage long 8 12; }

begin_suite
# The API server is started again whatever happened: the lane's next suites need it.
trap 'touch "$CTL_TMP/poll.stop" 2>/dev/null; "$CLUSTER_SH" apiserver-start "$INSTANCE" >/dev/null 2>&1; webhook_scenario_cleanup' EXIT
mk_webhook_cert || { not_ok "test certificate"; summary; exit 1; }
run_scenario short_outage
run_scenario long_outage
summary
