#!/usr/bin/env bash
# End-to-end: a rolling update of the controller's Deployment while a client
# requests a held change every second. No admission request may fail: each
# is answered, held (the stored object keeps the running value, the request
# is recorded), and what was recorded last is applied when the window opens.
#
# There is no kubelet here, so the test plays the rolling update exactly as
# Kubernetes does it for the chart's Deployment (as `helm template` renders
# it: replicas, maxSurge, maxUnavailable, the readiness probe's initial
# delay, period and timeout, --shutdown-delay, terminationGracePeriodSeconds):
# replicas run as processes against the real API server with leader election
# on a Lease; the API server calls the webhooks (the chart's
# MutatingWebhookConfiguration) at a stand-in for the webhook Service,
# e2e/svcproxy, which forwards each TCP connection to one replica of its
# endpoints list, round robin, as kube-proxy does (a connection stays with
# its replica until either side closes it).
#
# What happens when a Deployment replaces a pod, on a real cluster:
#   1. The Deployment controller scales the new ReplicaSet up (maxSurge 1:
#      one pod more than replicas); the new pod starts, and the kubelet
#      probes its readiness (GET /readyz over TLS on the webhook port) from
#      initialDelaySeconds on, every periodSeconds; at the first success the
#      pod is Ready and the endpoints controller adds it to the Service.
#   2. With the new pod available (maxUnavailable 0: never fewer ready pods
#      than replicas) it scales the old ReplicaSet down: the old pod gets a
#      deletionTimestamp. Two things follow, each from its own watch, in no
#      guaranteed order: the kubelet runs the pod's preStop hook (the chart
#      has none) and sends SIGTERM; the endpoints controller marks the pod
#      terminating, no longer ready, in the EndpointSlice. kube-proxy on
#      every node and the API server's service resolver see that change
#      later (kube-proxy syncs its rules at most once a second, more under
#      load): for a moment after SIGTERM, new connections to the Service
#      still reach the old pod, and connections already open to it (the API
#      server keeps its webhook connections alive) stay with it.
#   3. The chart's answer (--shutdown-delay, shutdownDelaySeconds): on
#      SIGTERM the controller releases its Lease at once (a peer leads at its
#      next try), answers 503 on /readyz, and keeps answering admission
#      requests for the delay, closing each connection after its answer so
#      that the API server's next call opens a new one, through the Service,
#      to a pod that stays. Then it exits, well within
#      terminationGracePeriodSeconds (after which the kubelet would SIGKILL).
# The test takes the unfavourable order: SIGTERM first, the endpoints
# change PROPAGATION seconds later.
#
# Every replica is replaced, ROLLS times over. Then the window opens and
# every recorded request must have been applied. The figures: requests
# sent, failed by admission, held; how long the old replicas took to exit;
# how long the Lease had no holder when the leader was replaced.
#
# ROLL_SHUTDOWN_DELAY overrides the chart's delay (0 is the controller
# before it had one: it exited at once on SIGTERM).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh (the webhook scenario helpers; no model runs)
. "$here/../model/lib.sh"

PROXY_BIN=${HCP_SVCPROXY_BIN:-$("$here/../svcproxy/build.sh" --path)}
WH_NAME=hcp-e2e-rolling-$$
ROLLS=${ROLL_ROLLS:-2}   # rolling updates in a row (every replica replaced each time)
PROPAGATION=2            # seconds from SIGTERM to the endpoints change reaching the Service
LEASE_ID=hcp-controller

# ---- the Deployment as the chart renders it -----------------------------------------

# shellcheck source=e2e/lib.sh
KV=$(. "$CTL_REPO/e2e/lib.sh" && echo "$KUBE_VERSION")
DEPLOY=$("$CTL_REPO/node_modules/.bin/helm" template hcp "$CTL_REPO/charts/hcp-controller" \
  --kube-version "$KV" 2>/dev/null | yq -s -c 'map(select(. != null and .kind == "Deployment"))[0]')
dv() { jq -r "$1 // \"\"" <<<"$DEPLOY"; }
REPLICAS=$(dv .spec.replicas)
SURGE=$(dv .spec.strategy.rollingUpdate.maxSurge)
UNAVAIL=$(dv .spec.strategy.rollingUpdate.maxUnavailable)
PROBE='.spec.template.spec.containers[0].readinessProbe'
PROBE_DELAY=$(dv "$PROBE.initialDelaySeconds")
PROBE_PERIOD=$(dv "$PROBE.periodSeconds")
PROBE_TIMEOUT=$(dv "$PROBE.timeoutSeconds")
PROBE_PATH=$(dv "$PROBE.httpGet.path")
PROBE_SCHEME=$(dv "$PROBE.httpGet.scheme")
DELAY=$(dv '.spec.template.spec.containers[0].args[] | select(startswith("--shutdown-delay=")) | ltrimstr("--shutdown-delay=")')
GRACE=$(dv .spec.template.spec.terminationGracePeriodSeconds)
DELAY=${ROLL_SHUTDOWN_DELAY:-$DELAY}

# ---- the replicas, the Service, the kubelet -----------------------------------------

EPS=$CTL_TMP/endpoints     # the Service's ready endpoints, as svcproxy reads them
declare -A WPORT           # replica -> webhook port
declare -A TERM_US         # replica -> when it got SIGTERM
declare -A EXIT_FILE       # replica -> file its exit instant is written to
OLD=() NEW=() SEQ=0 PROXY_PID="" SIM_T0="" SIM0="" SIM_SCALE=1

# endpoints_set NAME...: the Service's endpoints are these replicas now.
endpoints_set() {
  local n
  for n in "$@"; do echo "127.0.0.1:${WPORT[$n]}"; done >"$EPS.tmp"
  mv -f "$EPS.tmp" "$EPS"
}
endpoints() { sed 's/^/ /' "$EPS" | tr -d '\n'; }

# sim_now: the simulated instant now, on the clock the first replica started
# (every replica shares it, as the pods of one cluster share the time).
sim_now() {
  awk -v s="$(epoch "$SIM0")" -v t0="$SIM_T0" -v t="$(now_us)" -v k="$SIM_SCALE" \
    'BEGIN { printf "%.3f", s + (t - t0) / 1e6 * k }' | { read -r x; date -u -d "@$x" +%Y-%m-%dT%H:%M:%S.%3NZ; }
}

# service_up: the webhook Service's stand-in, with no endpoints yet, and the
# chart's webhook configuration pointing at it (for HostedCluster a in $NS).
service_up() {
  : >"$EPS"
  # The last scenario's port file names a stand-in that is gone.
  rm -f "$CTL_TMP/proxy.port"
  "$PROXY_BIN" --endpoints "$EPS" --port-file "$CTL_TMP/proxy.port" >"$CTL_TMP/proxy.out" 2>"$CTL_TMP/proxy.log" &
  PROXY_PID=$!
  wait_for 10 test -s "$CTL_TMP/proxy.port" || { not_ok "the Service stand-in listens"; return 1; }
  chart_webhook_config "$(cat "$CTL_TMP/proxy.port")" "$NS" "$NS-a" | k apply -f - >/dev/null ||
    { not_ok "the chart's webhook configuration, at the Service stand-in"; return 1; }
}

# start_replica NAME: a pod of the new ReplicaSet: the chart's webhook and
# leader election flags, its shutdown delay, the shared clock.
start_replica() {
  local n=$1 start
  WPORT[$n]=$(free_port)
  start=$SIM0
  [ -n "$SIM_T0" ] && start=$(sim_now)
  start_ctl "$n" "$NS" "$start" "$SCALE" --leader-elect --leader-election-namespace "$NS" \
    --leader-election-id "$LEASE_ID" --webhook-bind-address "127.0.0.1:${WPORT[$n]}" \
    --webhook-cert-file "$CERT" --webhook-key-file "$KEY" --webhook-failure-policy=Fail \
    "--shutdown-delay=$DELAY" || return 1
  [ -n "$SIM_T0" ] || { SIM_T0=${CTL_T0[$n]}; SIM_SCALE=${CTL_SCALE[$n]}; }
}

# probe NAME: the kubelet's readiness probe, once (HTTPS without verifying
# the certificate, as the kubelet does).
probe() {
  [ "$(curl -sk -o /dev/null -w '%{http_code}' --max-time "$PROBE_TIMEOUT" \
    "${PROBE_SCHEME,,}://127.0.0.1:${WPORT[$1]}$PROBE_PATH")" = 200 ]
}
# kubelet_ready NAME: probes from initialDelaySeconds after the container
# started, every periodSeconds, until one succeeds (successThreshold 1).
kubelet_ready() {
  local n=$1 t end
  t=$((CTL_T0[$n] + PROBE_DELAY * 1000000))
  end=$(($(now_us) + 60 * 1000000))
  while [ "$(now_us)" -lt "$end" ]; do
    while [ "$(now_us)" -lt "$t" ]; do sleep 0.05; done
    probe "$n" && return 0
    t=$((t + PROBE_PERIOD * 1000000))
  done
  return 1
}

# review_to NAME: an AdmissionReview of a held HostedCluster change sent
# straight to replica NAME's webhook listener, as a connection the Service
# still routes there would carry it; prints "allowed patchType
# connection-header".
review_to() {
  local hc body
  hc=$(api GET "$(hc_path "$NS" a)")
  body=$(jq -c --arg img "$REL2" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "stale-route", operation: "UPDATE", namespace: .metadata.namespace, name: .metadata.name,
      kind: {group: "hypershift.openshift.io", version: "v1beta1", kind: "HostedCluster"},
      resource: {group: "hypershift.openshift.io", version: "v1beta1", resource: "hostedclusters"},
      userInfo: {username: "e2e-stale-route"}, oldObject: ., object: (.spec.release.image = $img)}}' <<<"$hc")
  curl -s --max-time 5 --cacert "$CERT" -D "$CTL_TMP/review.h" -o "$CTL_TMP/review.b" -X POST \
    -H 'Content-Type: application/json' --data-binary "$body" \
    "https://127.0.0.1:${WPORT[$1]}/hold/hostedclusters" || { echo "no-answer"; return; }
  echo "$(jq -r '.response.allowed' "$CTL_TMP/review.b") $(jq -r '.response.patchType // "none"' "$CTL_TMP/review.b")" \
    "$(tr -d '\r' <"$CTL_TMP/review.h" | awk -F': ' 'tolower($1) == "connection" { print $2 }')"
}

# terminate NAME: the old pod's deletion: SIGTERM now, the endpoints change
# PROPAGATION s later. Meanwhile the pod must report not ready and still
# answer a webhook call routed to it. Its exit is watched in the background.
terminate() {
  local n=$1 pid=${CTL_PID[$1]} rest=() o
  for o in "${OLD[@]}" "${NEW[@]}"; do [ "$o" = "$n" ] || rest+=("$o"); done
  EXIT_FILE[$n]=$CTL_TMP/$n.exit
  TERM_US[$n]=$(now_us)
  kill -TERM "$pid"
  (while kill -0 "$pid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
     sleep 0.02
   done
   now_us >"${EXIT_FILE[$n]}") &
  sleep 0.3
  check "$n after SIGTERM, still routed: /readyz says not ready (503)" \
    eval '[ "$(curl -sk -o /dev/null -w "%{http_code}" --max-time 2 "https://127.0.0.1:${WPORT[$n]}/readyz")" = 503 ]'
  o=$(review_to "$n")
  check_eq "$n after SIGTERM, still routed: a webhook call is answered and the change held, the connection closed after it" \
    "true JSONPatch close" "$o"
  sleep "$(awk -v p="$PROPAGATION" 'BEGIN { print p - 0.3 }')"
  endpoints_set "${rest[@]}"
}

# roll: one rolling update as the Deployment controller makes it: new pods
# while there are fewer than replicas + maxSurge (and fewer new than
# replicas), each an endpoint once its readiness probe passes; old pods
# deleted while the ready pods left are at least replicas - maxUnavailable.
roll() {
  local n pending ready
  OLD=("${NEW[@]}") NEW=()
  while [ ${#OLD[@]} -gt 0 ]; do
    pending=()
    while [ $((${#OLD[@]} + ${#NEW[@]})) -lt $((REPLICAS + SURGE)) ] && [ ${#NEW[@]} -lt "$REPLICAS" ]; do
      n=r$((++SEQ))
      start_replica "$n" || { not_ok "replica $n starts"; return 1; }
      NEW+=("$n") pending+=("$n")
    done
    for n in "${pending[@]}"; do
      kubelet_ready "$n" || { not_ok "replica $n becomes ready"; return 1; }
      endpoints_set "${OLD[@]}" "${NEW[@]}"
      echo "# $(date -u +%T.%3N) $n ready; endpoints:$(endpoints)"
    done
    ready=$((${#OLD[@]} + ${#NEW[@]}))
    while [ ${#OLD[@]} -gt 0 ] && [ $((ready - 1)) -ge $((REPLICAS - UNAVAIL)) ]; do
      n=${OLD[0]}
      OLD=("${OLD[@]:1}")
      echo "# $(date -u +%T.%3N) $n: SIGTERM (leader: $(metric "$n" hcp_controller_leader))"
      terminate "$n"
      ready=$((ready - 1))
      echo "# $(date -u +%T.%3N) $n out of the endpoints:$(endpoints)"
    done
    if [ ${#OLD[@]} -gt 0 ] && [ $((${#OLD[@]} + ${#NEW[@]})) -ge $((REPLICAS + SURGE)) ]; then
      not_ok "the rolling update makes progress" "maxSurge $SURGE and maxUnavailable $UNAVAIL allow no step"
      return 1
    fi
  done
}

# ---- the client: a held change every second -----------------------------------------

# request PATH IMAGE KIND: one write as OCM would send it; prints
# "KIND CODE HELD RECORDED" (HELD: the stored release stayed; RECORDED: the
# request is recorded as sent), and the message of a refusal.
request() {
  local code out rec
  code=$(curl -s --max-time 15 --cacert "$E_CA" -X PATCH -H "Authorization: Bearer $ADMIN_TOKEN" \
    -H "Content-Type: application/merge-patch+json" -o "$CTL_TMP/req.$3" -w '%{http_code}' \
    --data-binary "{\"spec\": {\"release\": {\"image\": \"$2\"}}}" "$E_SERVER$1")
  out=$(cat "$CTL_TMP/req.$3")
  if [ "$3" = HostedCluster ]; then
    rec=$(jq -r --arg k "$CM/requested-release-image" '.metadata.annotations[$k] // ""' <<<"$out" 2>/dev/null)
  else
    rec=$(jq -r --arg k "$CM/requested-nodepool-spec" '.metadata.annotations[$k] // "{}" | fromjson | .release.image // ""' <<<"$out" 2>/dev/null)
  fi
  echo "$(date -u +%T.%3N) $3 $code $([ "$(jq -r .spec.release.image <<<"$out" 2>/dev/null)" = "$REL0" ] && echo held || echo NOT-held)" \
    "$([ "$rec" = "$2" ] && echo recorded || echo NOT-recorded) $2 $([ "$code" -ge 400 ] 2>/dev/null && jq -r .message <<<"$out")"
}
# client KIND: until $CTL_TMP/client.stop exists, every second a release
# request: a HostedCluster's (4.17.101 and up, a new one each time) or a
# NodePool's (4.17.1 to 4.17.3 in turn, releases its control plane has
# completed). The two kinds run side by side.
client() {
  local i=0 t
  while [ ! -e "$CTL_TMP/client.stop" ]; do
    t=$(now_us)
    i=$((i + 1))
    if [ "$1" = HostedCluster ]; then
      request "$(hc_path "$NS" a)" "quay.io/openshift-release-dev/ocp-release:4.17.$((100 + i))-x86_64" HostedCluster
    else
      request "$(np_path "$NS" np1)" "quay.io/openshift-release-dev/ocp-release:4.17.$((i % 3 + 1))-x86_64" NodePool
    fi
    while [ "$(now_us)" -lt $((t + 1000000)) ]; do sleep 0.02; done
  done
}

# ---- the scenario -------------------------------------------------------------------

rolling_update() {
  local p d t_end rec n_req n_fail n_notheld n_norec hc_last np_last exit_ms max_exit=0 lead_gap="" counts
  echo "# the chart's Deployment: replicas $REPLICAS, maxSurge $SURGE, maxUnavailable $UNAVAIL;" \
    "readiness $PROBE_SCHEME $PROBE_PATH from ${PROBE_DELAY}s every ${PROBE_PERIOD}s;" \
    "shutdown delay ${DELAY}s, grace ${GRACE}s"
  for v in "$REPLICAS" "$SURGE" "$UNAVAIL" "$PROBE_DELAY" "$PROBE_PERIOD" "$PROBE_TIMEOUT" "$DELAY" "$GRACE"; do
    [[ $v =~ ^[0-9]+$ ]] || { not_ok "the chart's Deployment renders as whole numbers" "got '$v' (a percentage?)"; return; }
  done
  check "at least 2 replicas" [ "$REPLICAS" -ge 2 ]
  check "the shutdown delay fits the grace period (delay + 5 s <= $GRACE s)" [ $((DELAY + 5)) -le "$GRACE" ]

  OLD=() NEW=() SEQ=0 SIM_T0="" SIM_SCALE=1 WPORT=() TERM_US=() EXIT_FILE=()
  NS=$(new_ns rolling) || return
  # The window opens at Saturday 01:00, 60 real seconds after the first
  # replica starts (150 when the scenario runs again on a slow machine,
  # with every clock CTL_SLOW times slower).
  SCALE=1
  local wait_real=60
  [ "${CTL_SLOW:-1}" = 1 ] || wait_real=150
  SIM0=$(rfc3339 $(($(epoch 2026-03-07T01:00:00Z) - wait_real / ${CTL_SLOW:-1})))
  OPEN=2026-03-07T01:00:00Z
  must mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || return
  must mk_hc "$NS" a policy=weekend || return
  must mk_np "$NS" np1 a policy=weekend || return
  service_up || return

  # The Deployment as it runs before the update: REPLICAS ready pods.
  for ((p = 0; p < REPLICAS; p++)); do
    n=r$((++SEQ))
    start_replica "$n" || { not_ok "replica $n starts"; return; }
    NEW+=("$n")
  done
  for n in "${NEW[@]}"; do kubelet_ready "$n" || { not_ok "replica $n becomes ready"; return; }; done
  endpoints_set "${NEW[@]}"
  opted() { [ "$(get "$(np_path "$NS" np1)" ".metadata.labels[\"$CM/opted-in\"] // \"\"")" = true ] &&
            [ "$(get "$(hc_path "$NS" a)" ".metadata.labels[\"$CM/opted-in\"] // \"\"")" = true ]; }
  check "the leader labels the opted-in objects (the webhooks' objectSelector)" wait_for 10 opted
  rec=$(request "$(hc_path "$NS" a)" "$REL1" HostedCluster)
  check_contains "before the update: a release is held through the Service" "HostedCluster 200 held recorded" "$rec"

  # The background: the client, and who holds the Lease (every 50 ms).
  rm -f "$CTL_TMP/client.stop"
  client HostedCluster >"$CTL_TMP/client.hc" 2>&1 &
  local client_pid=$!
  client NodePool >"$CTL_TMP/client.np" 2>&1 &
  local client2_pid=$!
  (while [ ! -e "$CTL_TMP/client.stop" ]; do
     echo "$(now_us) $(get "/apis/coordination.k8s.io/v1/namespaces/$NS/leases/$LEASE_ID" '.spec.holderIdentity // ""')"
     sleep 0.05
   done >"$CTL_TMP/lease.log") &
  local lease_pid=$!
  local t0
  t0=$(now_us)
  for ((p = 1; p <= ROLLS; p++)); do
    echo "# rolling update $p of $ROLLS"
    roll || break
  done
  # Until the last old pod has exited (its delay over), and a second more.
  for n in "${!EXIT_FILE[@]}"; do wait_for $((GRACE + 5)) test -s "${EXIT_FILE[$n]}"; done
  sleep 1
  t_end=$(now_us)
  touch "$CTL_TMP/client.stop"
  wait "$client_pid" "$client2_pid" "$lease_pid" 2>/dev/null
  sort "$CTL_TMP/client.hc" "$CTL_TMP/client.np" >"$CTL_TMP/client.log"
  still_before "${NEW[0]}" "$OPEN" "the end of the rolling update"

  # Every old pod: exit 0 within the grace period.
  for n in "${!EXIT_FILE[@]}"; do
    d=$(cat "${EXIT_FILE[$n]}" 2>/dev/null)
    if [ -z "$d" ]; then not_ok "$n exited after SIGTERM" "still running"; continue; fi
    exit_ms=$(((d - TERM_US[$n]) / 1000))
    [ "$exit_ms" -gt "$max_exit" ] && max_exit=$exit_ms
    wait "${CTL_PID[$n]}" 2>/dev/null
    check_eq "$n exits 0 on SIGTERM" 0 "$?"
    unset "CTL_PID[$n]"
    in_range "$n exits after its shutdown delay and within the grace period (${exit_ms} ms)" \
      "$exit_ms" $((DELAY * 1000)) $((GRACE * 1000))
  done
  # The Lease: the longest it had no holder (released by a leader that
  # stopped, not yet taken by a peer).
  lead_gap=$(awk 'NF < 2 { if (s == "") s = $1; next } { if (s != "" && $1 - s > g) g = $1 - s; s = "" }
    END { printf "%d", g / 1000 }' "$CTL_TMP/lease.log")

  n_req=$(grep -c -E ' (HostedCluster|NodePool) ' "$CTL_TMP/client.log")
  n_fail=$(awk '$3 !~ /^2/' "$CTL_TMP/client.log" | grep -c .)
  n_notheld=$(grep -c ' NOT-held ' "$CTL_TMP/client.log")
  n_norec=$(grep -c ' NOT-recorded ' "$CTL_TMP/client.log")
  hc_last=$(awk '$2 == "HostedCluster" && $3 ~ /^2/ { v = $6 } END { print v }' "$CTL_TMP/client.log")
  np_last=$(awk '$2 == "NodePool" && $3 ~ /^2/ { v = $6 } END { print v }' "$CTL_TMP/client.log")
  if [ "$n_fail" -gt 0 ] || [ "$n_notheld" -gt 0 ]; then
    echo "# requests that failed or were not held:"
    grep -E ' [45][0-9][0-9] | NOT-' "$CTL_TMP/client.log" | head -10 | sed 's/^/#   /'
  fi
  # The longest time between two requests of a kind.
  # The client is this test's shell (a request is curl and jq): on a busy
  # machine its own pace slows with the load (real_s).
  local gap gap_max
  gap=$(awk '{ split($1, a, ":"); t = a[1] * 3600 + a[2] * 60 + a[3]; if (($2 in l) && t - l[$2] > g) g = t - l[$2]; l[$2] = t }
    END { printf "%.1f", g }' "$CTL_TMP/client.log")
  gap_max=$(real_s 2.5)
  check "the client requested each change every second through the update ($n_req requests in $(((t_end - t0) / 1000000)) s, at most ${gap} s apart; bound ${gap_max} s)" \
    lt "$gap" "$gap_max"
  check_eq "admission requests refused or failed during the rolling update" 0 "$n_fail"
  check_eq "requests admitted but not held (the stored release changed)" 0 "$n_notheld"
  check_eq "requests admitted without the request recorded" 0 "$n_norec"
  check "every replica was replaced ($SEQ started, $((SEQ - REPLICAS)) new)" \
    [ "$SEQ" -eq $((REPLICAS * (ROLLS + 1))) ]

  # The window opens: what was recorded last is applied (the leader's
  # writes pass the webhooks too, through the Service).
  sleep_until_sim "${NEW[0]}" "$OPEN" 0
  last_requests_applied() { [ "$(get "$(hc_path "$NS" a)" .spec.release.image)" = "$hc_last" ] &&
              [ "$(get "$(np_path "$NS" np1)" .spec.release.image)" = "$np_last" ]; }
  check "at the window: the last recorded HostedCluster and NodePool requests are applied" wait_for 20 last_requests_applied
  check_eq "the HostedCluster's request record is gone" "" \
    "$(get "$(hc_path "$NS" a)" ".metadata.annotations[\"$CM/requested-release-image\"] // \"\"")"
  check_eq "the NodePool's request record is gone" "" \
    "$(get "$(np_path "$NS" np1)" ".metadata.annotations[\"$CM/requested-nodepool-spec\"] // \"\"")"
  # Beside a leader that writes, the standby lets nothing through: it sees
  # the leader's releases in its cache within its second.
  sleep 2
  local sb=0 sbc=0
  for n in "${NEW[@]}"; do
    [ "$(metric "$n" hcp_controller_leader)" = 1 ] && continue
    sb=$((sb + $(metric "$n" hcp_controller_standby_releases_total)))
    sbc=$((sbc + $(metric "$n" hcp_controller_standby_release_conflicts_total)))
  done
  echo "# figure: at the window beside the leader, the standby let through $sb held changes ($sbc of its writes refused: the leader wrote first)"

  kill -TERM "$PROXY_PID" 2>/dev/null
  wait "$PROXY_PID" 2>/dev/null
  PROXY_PID=""
  counts=$(cat "$CTL_TMP/proxy.out")
  check_eq "no connection the Service routed reached a replica that no longer listened" 0 \
    "$(jq '[.dial_failed[]] | add // 0' <<<"$counts")"
  echo "# figure: rolling update of the Deployment ($REPLICAS replicas, maxSurge $SURGE, maxUnavailable $UNAVAIL," \
    "$ROLLS rollouts, $((SEQ - REPLICAS)) pods replaced; endpoints changed ${PROPAGATION} s after SIGTERM; shutdown delay ${DELAY} s)" \
    "with a HostedCluster and a NodePool change requested every second: $n_req requests in $(((t_end - t0) / 1000000)) s," \
    "admission requests failed $n_fail, held $((n_req - n_notheld - n_fail)), not recorded $n_norec;" \
    "the last of each applied at the window (load average $(cut -d' ' -f1 /proc/loadavg))"
  echo "# figure: old replicas exited ${max_exit} ms after SIGTERM at most (grace ${GRACE} s);" \
    "connections through the Service: $(jq -c '{connections, dial_failed, routed: (.routed | length)}' <<<"$counts")"
  check "a leader replaced: the Lease without a holder for at most 3 s (${lead_gap} ms)" [ "$lead_gap" -le 3000 ]
  echo "# figure: the leader stopped by the update: Lease without a holder for ${lead_gap} ms at most (released on SIGTERM, taken at a peer's next try)"
}

# ---- the leader killed just before a window -------------------------------------------

# leader_of A B: the replica that leads now, or "".
leader_of() {
  local n
  for n in "$@"; do [ "$(metric "$n" hcp_controller_leader)" = 1 ] && { echo "$n"; return; }; done
}

# The leader dies (SIGKILL: a node lost, an OOM kill) KILL_BEFORE seconds
# before a window opens, with a release held until that window. It keeps
# the Lease until the Lease expires (15 s), so the standby does not lead
# when the window opens. It decides the same plan from its own caches: the
# release is due, and a second later (--standby-release-after) it is still
# held and nothing was let through meanwhile, so the standby writes it
# itself, conditional on the version it decided from. The figures: how late
# after the window (before: 10.8 to 12.3 s, at the takeover), the Lease
# taken later, and the change told (ChangesInitiated) once, by the replica
# that wrote it when it leads.
KILL_BEFORE=${ROLL_KILL_BEFORE:-6}
leader_killed_before_window() {
  local lead follow h0 t0 t_kill t_open t_take="" t_write delay_ms take_ms n
  OLD=() NEW=() SEQ=0 SIM_T0="" SIM_SCALE=1 WPORT=() TERM_US=() EXIT_FILE=()
  NS=$(new_ns failover) || return
  SCALE=1
  local wait_real=30
  [ "${CTL_SLOW:-1}" = 1 ] || wait_real=75
  SIM0=$(rfc3339 $(($(epoch 2026-03-07T01:00:00Z) - wait_real / ${CTL_SLOW:-1})))
  OPEN=2026-03-07T01:00:00Z
  must mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || return
  must mk_hc "$NS" a policy=weekend || return
  service_up || return
  for n in r1 r2; do
    start_replica "$n" || { not_ok "replica $n starts"; return; }
    NEW+=("$n")
  done
  for n in r1 r2; do kubelet_ready "$n" || { not_ok "replica $n becomes ready"; return; }; done
  endpoints_set r1 r2
  check "one replica leads" wait_for 20 eval '[ -n "$(leader_of r1 r2)" ]'
  lead=$(leader_of r1 r2)
  [ -n "$lead" ] || return
  if [ "$lead" = r1 ]; then follow=r2; else follow=r1; fi
  opted() { [ "$(get "$(hc_path "$NS" a)" ".metadata.labels[\"$CM/opted-in\"] // \"\"")" = true ]; }
  check "the leader labels the opted-in HostedCluster" wait_for 10 opted
  check_contains "a release requested before the window is held" "HostedCluster 200 held recorded" \
    "$(request "$(hc_path "$NS" a)" "$REL1" HostedCluster)"
  (while [ ! -e "$CTL_TMP/failover.stop" ]; do
     t0=$(now_us)
     echo "$t0|$(get "/apis/coordination.k8s.io/v1/namespaces/$NS/leases/$LEASE_ID" '.spec.holderIdentity // ""')|$(get "$(hc_path "$NS" a)" .spec.release.image)|$(now_us)"
     sleep 0.05
   done >"$CTL_TMP/failover.log") &
  local poll_pid=$!
  # The release on its own poll, each answer stamped the instant curl
  # returned it (before jq reads it, which under load takes longer than
  # the GET): "sent-us|image|answered-us".
  (while [ ! -e "$CTL_TMP/failover.stop" ]; do
     t0=$(now_us)
     body=$(api GET "$(hc_path "$NS" a)" 2>/dev/null)
     t1=$(now_us)
     echo "$t0|$(jq -r .spec.release.image <<<"$body" 2>/dev/null)|$t1"
     sleep 0.02
   done >"$CTL_TMP/failover-release.log") &
  local rpoll_pid=$!
  sleep_until_sim "$follow" "$(rfc3339 $(($(epoch "$OPEN") - KILL_BEFORE)))"
  h0=$(get "/apis/coordination.k8s.io/v1/namespaces/$NS/leases/$LEASE_ID" '.spec.holderIdentity // ""')
  stop_ctl "$lead" KILL
  t_kill=$(now_us)
  # The kubelet sees the container gone and the pod leaves the endpoints.
  sleep "$PROPAGATION"
  endpoints_set "$follow"
  released() { [ "$(get "$(hc_path "$NS" a)" .spec.release.image)" = "$REL1" ]; }
  check "the held release goes out" wait_for 40 released
  local w_standby
  w_standby=$(metric "$follow" hcp_controller_writes_total)
  # The poll goes on until a peer leads.
  wait_for 30 eval '[ -n "$(get "/apis/coordination.k8s.io/v1/namespaces/$NS/leases/$LEASE_ID" ".spec.holderIdentity // \"\"" | grep -v -x -F "$h0")" ]'
  touch "$CTL_TMP/failover.stop"
  wait "$poll_pid" "$rpoll_pid" 2>/dev/null
  # The poll's last sample can have read the Lease just before the write
  # that ended the wait (two reads a sample, slow under load): one more, so
  # that the log has it (at most a sample late).
  t0=$(now_us)
  echo "$t0|$(get "/apis/coordination.k8s.io/v1/namespaces/$NS/leases/$LEASE_ID" '.spec.holderIdentity // ""')|$(get "$(hc_path "$NS" a)" .spec.release.image)|$(now_us)" \
    >>"$CTL_TMP/failover.log"
  # The window's opening instant in real time, on the replicas' shared clock.
  t_open=$(awk -v t0="$SIM_T0" -v s="$(epoch "$SIM0")" -v o="$(epoch "$OPEN")" -v k="$SIM_SCALE" \
    'BEGIN { printf "%.0f", t0 + (o - s) / k * 1e6 }')
  t_take=$(awk -F'|' -v t="$t_kill" -v h="$h0" '$1 > t && $2 != "" && $2 != h { print $1; exit }' "$CTL_TMP/failover.log")
  # What a sample of the release's poll shows was written before it was
  # answered, perhaps after it was sent.
  t_write=$(awk -F'|' -v r="$REL1" '$2 == r { print $3; exit }' "$CTL_TMP/failover-release.log")
  [ -n "$t_take" ] && [ -n "$t_write" ] || { not_ok "the takeover and the write are in the Lease log"; return; }
  check "the release was not written before the window" [ "$t_write" -ge "$t_open" ]
  delay_ms=$(((t_write - t_open) / 1000))
  take_ms=$(((t_take - t_kill) / 1000))
  check "the standby writes the held release within 2 s of the window (${delay_ms} ms), before it leads" \
    [ "$delay_ms" -le $((2000 * ${CTL_SLOW:-1})) -a "$t_write" -lt "$t_take" ]
  check_eq "the standby counts the release it let through" 1 "$(metric "$follow" hcp_controller_standby_releases_total)"
  check_eq "no write of it was refused for another's (409)" 0 "$(metric "$follow" hcp_controller_standby_release_conflicts_total)"
  check_eq "the standby wrote the release and nothing else before it led (status, Events and the rest are the leader's)" \
    1 "$w_standby"
  check "a peer takes the Lease once it expires: within Lease 15 s + retry 2 s of the kill (${take_ms} ms)" \
    [ "$take_ms" -le $(((15 + 2 + 1) * 1000 * ${CTL_SLOW:-1})) ]
  check "the new leader tells the change it let through, once (ChangesInitiated)" \
    wait_for 10 eval '[ "$(initiated a)" = 1 ]'
  sleep 2
  check_eq "... and not again" 1 "$(initiated a)"
  echo "# figure: leader killed ${KILL_BEFORE} s before a window: the held release written by the standby ${delay_ms} ms after the window opened" \
    "(before: at the takeover, 10.8-12.3 s); the Lease taken ${take_ms} ms after the kill (Lease 15 s, retry 2 s; load average $(cut -d' ' -f1 /proc/loadavg))"
  kill -TERM "$PROXY_PID" 2>/dev/null
  wait "$PROXY_PID" 2>/dev/null
  PROXY_PID=""
}

begin_suite
trap 'touch "$CTL_TMP/client.stop" "$CTL_TMP/failover.stop" 2>/dev/null; [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null; watch_stop; webhook_scenario_cleanup' EXIT
mk_webhook_cert || { not_ok "test certificate"; summary; exit 1; }
run_scenario rolling_update
run_scenario leader_killed_before_window
summary
