#!/usr/bin/env bash
# Live checks of /metrics with Debian's Prometheus: a controller runs against
# the "main" instance with a policy, HostedClusters and NodePools; its
# /metrics passes `promtool check metrics`; a Prometheus server scrapes it
# every second with charts/hcp-controller/files/alerts.yaml loaded; a query
# of change_management_next_change_eta returns exactly the expected series
# with the values the policy gives at the controller's simulated time; the
# rules load with health "ok" and evaluate to the expected pending alerts.
# /metrics is served as the chart serves it (--metrics-secure=true): over
# HTTPS, to a ServiceAccount allowed "get" on the URL /metrics; Prometheus
# scrapes with that ServiceAccount's token and trusts the serving
# certificate's CA, as the chart's ServiceMonitor does. It answers in gzip
# to a client that asks (Prometheus does) and in plain text otherwise.
#
# Needs the "main" instance (e2e/cluster.sh up main), the controller binary
# ($HCP_BIN, default build/hcp-controller), /usr/bin/prometheus and promtool.
# Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/../controller/lib.sh"

PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
PROMTOOL=${PROMTOOL:-promtool}
RULES=$CTL_REPO/charts/hcp-controller/files/alerts.yaml
START=2026-03-06T12:00:00Z # a Friday; the weekly window opens 12 h later
WINDOW=2026-03-07T00:00:00Z
OLD_IMAGE=quay.io/openshift-release-dev/ocp-release:4.16.9-x86_64

PROM_PID="" PROM_PORT="" PROM_LOG=""

stop_prometheus() {
  [ -n "$PROM_PID" ] || return 0
  kill -TERM "$PROM_PID" 2>/dev/null
  wait "$PROM_PID" 2>/dev/null
  PROM_PID=""
}

# start_prometheus SCRAPE-PORT: runs a Prometheus server (not the system
# service) with its config, data and log under $CTL_TMP, scraping the
# controller every second and evaluating the alert rules every second.
start_prometheus() {
  local dir=$CTL_TMP/prometheus
  mkdir -p "$dir/data"
  cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: hcp-controller
    honor_labels: true
    scheme: https
    authorization:
      credentials_file: $CTL_TMP/prom.token
    tls_config:
      ca_file: $CTL_METRICS_CA
    static_configs:
      - targets: ["127.0.0.1:$1"]
EOF
  PROM_PORT=$(free_port)
  PROM_LOG=$dir/prometheus.log
  "$PROMETHEUS" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$PROM_LOG" 2>&1 &
  PROM_PID=$!
  wait_for 30 prom_ready
}
prom_ready() {
  [ -d "/proc/$PROM_PID" ] && curl -sf --max-time 2 "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null
}
# prom PATH [CURL-ARGS...]: a GET of the Prometheus HTTP API.
prom() {
  local path=$1
  shift
  curl -sf --max-time 5 -G "http://127.0.0.1:$PROM_PORT$path" "$@"
}
# query PROMQL [TIME]: the result array of an instant query.
query() {
  prom /api/v1/query --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} | jq -c '.data.result'
}
# rules_evaluated: every rule has been evaluated at least once, healthy.
rules_evaluated() {
  prom /api/v1/rules | jq -e '[.data.groups[].rules[] |
    select(.health != "ok" or (.lastEvaluation | startswith("0001-")))] | length == 0' >/dev/null
}
target_up() { [ "$(query 'up{job="hcp-controller"}' | jq -r '.[0].value[1] // ""')" = 1 ]; }
have_series() { [ "$(query "count($1)" | jq -r '.[0].value[1] // 0')" = "$2" ]; }
# active_alerts NAME: "namespace/object STATE" of each active instance of the
# alert ("namespace/policy" for a policy, "-" for an alert without labels),
# sorted, comma-separated.
active_alerts() {
  prom /api/v1/alerts | jq -r --arg a "$1" \
    '[.data.alerts[] | select(.labels.alertname == $a) |
      ([.labels.namespace, (.labels.object // .labels.policy)] | map(select(.)) | join("/") |
        if . == "" then "-" else . end) + " " + .state] | sort | join(",")'
}

live_scrape() {
  local ns
  ns=$(new_ns prom) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 4h)" || return
  # A valid policy with no window within 10 years (a long freeze) and one
  # that is not valid (unknown time zone; the CRD pattern accepts it).
  must mk_policy "$ns" frozen '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {
    "timeZone": "UTC", "permit": {"recurrence": {"frequency": "Daily", "daily": {"interval": 1}},
      "startTime": "01:00", "duration": "1h"},
    "exclude": [{"fromDate": "2026-01-01", "untilDate": "2099-01-01", "reason": "long freeze"}]}}' || return
  must mk_policy "$ns" broken '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {
    "timeZone": "Mars/Olympus", "permit": {"rrule": "FREQ=WEEKLY;BYDAY=SA"}}}' || return
  # restricted: ByPolicy weekly with a release update pending; its NodePool
  # follows the same policy. open: no stanza (Permissive) with a NodePool.
  # frozen: ByPolicy on the policy without window. held: Restrictive.
  must mk_hc "$ns" restricted policy=weekly || return
  must set_hc_history "$ns" restricted Completed "$OLD_IMAGE" || return
  must mk_np "$ns" restricted-np restricted policy=weekly || return
  must mk_hc "$ns" open || return
  must mk_np "$ns" open-np open || return
  must mk_hc "$ns" frozen policy=frozen || return
  must mk_hc "$ns" held strategy=Restrictive || return

  # The scraping identity: a ServiceAccount allowed "get" on /metrics.
  must k -n "$ns" create serviceaccount prometheus || return
  must k create clusterrole "$PROM_ROLE" --verb=get --non-resource-url=/metrics || return
  must k create clusterrolebinding "$PROM_ROLE" --clusterrole="$PROM_ROLE" \
    --serviceaccount="$ns:prometheus" || return
  CTL_METRICS_TOKEN=$(k -n "$ns" create token prometheus --duration 1h) || { not_ok "setup: token"; return; }
  (umask 077 && printf '%s' "$CTL_METRICS_TOKEN" >"$CTL_TMP/prom.token")
  CTL_METRICS_CA=$CTL_TMP/metrics.crt
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 1 -nodes \
    -subj /CN=hcp-controller-metrics -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$CTL_TMP/metrics.key" -out "$CTL_METRICS_CA" 2>/dev/null || { not_ok "setup: certificate"; return; }
  start_ctl a "$ns" "$START" 1 --metrics-secure=true --metrics-cert-file "$CTL_METRICS_CA" \
    --metrics-key-file "$CTL_TMP/metrics.key" || { not_ok "controller starts"; return; }
  check_eq "/metrics without the token: 401" 401 \
    "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$CTL_METRICS_CA" "https://127.0.0.1:${CTL_MPORT[a]}/metrics")"
  EVENTUALLY=10 eventually "converged (restricted ChangesPending=True)" True \
    cond "$(hc_path "$ns" restricted)" ChangesPending status

  # ---- promtool check metrics on a live scrape
  metrics a >"$CTL_TMP/scrape"
  check "a live scrape has every per-object family" \
    grep -q "^change_management_next_change_eta{kind=\"NodePool\",namespace=\"$ns\",object=\"open-np\"" \
    "$CTL_TMP/scrape"
  local lint rc
  lint=$("$PROMTOOL" check metrics <"$CTL_TMP/scrape" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ] && [ -z "$lint" ]; then
    ok "promtool check metrics reports no problem on a live /metrics"
  else
    not_ok "promtool check metrics reports no problem on a live /metrics" \
      "exit $rc: $(head -5 <<<"$lint" | tr '\n' ' ')"
  fi

  # ---- gzip to a client that asks for it (Prometheus does): the same text
  local hdr=$CTL_TMP/scrape.headers
  curl -sf --max-time 5 --cacert "$CTL_METRICS_CA" -H "Authorization: Bearer $CTL_METRICS_TOKEN" \
    -H 'Accept-Encoding: gzip' -D "$hdr" -o "$CTL_TMP/scrape.gz" \
    "https://127.0.0.1:${CTL_MPORT[a]}/metrics"
  check "/metrics asked for gzip answers in gzip" grep -qi '^content-encoding: gzip' "$hdr"
  check "/metrics in gzip says it varies by Accept-Encoding" grep -qi '^vary: accept-encoding' "$hdr"
  lint=$(gunzip -c <"$CTL_TMP/scrape.gz" | "$PROMTOOL" check metrics 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ] && [ -z "$lint" ] &&
    gunzip -c <"$CTL_TMP/scrape.gz" | grep -q "^change_management_next_change_eta{kind=\"NodePool\",namespace=\"$ns\",object=\"open-np\""; then
    ok "the gzip answer inflates to /metrics that promtool accepts"
  else
    not_ok "the gzip answer inflates to /metrics that promtool accepts" \
      "exit $rc: $(head -5 <<<"$lint" | tr '\n' ' ')"
  fi
  curl -sf --max-time 5 --cacert "$CTL_METRICS_CA" -H "Authorization: Bearer $CTL_METRICS_TOKEN" \
    -D "$hdr" -o /dev/null "https://127.0.0.1:${CTL_MPORT[a]}/metrics"
  check "/metrics not asked for gzip answers in plain text" \
    bash -c '! grep -qi "^content-encoding" "$1"' _ "$hdr"

  # ---- a Prometheus server scrapes the controller (asking for gzip)
  if ! start_prometheus "${CTL_MPORT[a]}"; then
    not_ok "prometheus starts" "$(tail -5 "$PROM_LOG" 2>/dev/null | tr '\n' ' ')"
    return
  fi
  ok "prometheus starts (127.0.0.1:$PROM_PORT)"
  if wait_for 20 target_up; then ok "the controller target is up"; else
    not_ok "the controller target is up" "$(prom /api/v1/targets | jq -c '.data.activeTargets[0].lastError')"
    return
  fi
  check "all 6 objects' next_change_eta series are scraped" \
    wait_for 10 have_series "change_management_next_change_eta{namespace=\"$ns\"}" 6

  # Both queries at one instant: the ETA samples and their scrape time.
  local t res ts
  t=$(awk -v u="$(now_us)" 'BEGIN { printf "%.3f", u / 1e6 }')
  res=$(query change_management_next_change_eta "$t")
  ts=$(query "timestamp(change_management_next_change_eta{namespace=\"$ns\",object=\"restricted\"})" "$t" |
    jq -r '.[0].value[1] // ""')
  check_eq "the query returns exactly the expected series and labels" \
    "$(printf '%s\n' \
      "HostedCluster $ns frozen control-plane hcp-controller 127.0.0.1:${CTL_MPORT[a]}" \
      "HostedCluster $ns held control-plane hcp-controller 127.0.0.1:${CTL_MPORT[a]}" \
      "HostedCluster $ns open control-plane hcp-controller 127.0.0.1:${CTL_MPORT[a]}" \
      "HostedCluster $ns restricted control-plane hcp-controller 127.0.0.1:${CTL_MPORT[a]}" \
      "NodePool $ns open-np worker-nodes hcp-controller 127.0.0.1:${CTL_MPORT[a]}" \
      "NodePool $ns restricted-np worker-nodes hcp-controller 127.0.0.1:${CTL_MPORT[a]}")" \
    "$(jq -r '.[] | .metric | select(.__name__ == "change_management_next_change_eta") |
        "\(.kind) \(.namespace) \(.object) \(.system) \(.job) \(.instance) \(keys | join(","))"' <<<"$res" |
      awk '{ if ($7 != "__name__,instance,job,kind,namespace,object,system") print "extra labels: " $0; else { NF = 6; print } }' |
      sort)"
  val() { jq -r --arg k "$1" --arg o "$2" '.[] | select(.metric.kind == $k and .metric.object == $o) | .value[1]' <<<"$res"; }
  check_eq "open (no stanza): 0, permitted now" 0 "$(val HostedCluster open)"
  check_eq "open-np (no stanza, its cluster open): 0" 0 "$(val NodePool open-np)"
  check_eq "held (Restrictive): -1, paused indefinitely" -1 "$(val HostedCluster held)"
  check_eq "frozen (no window within 10 years): -1" -1 "$(val HostedCluster frozen)"
  # The simulated clock at the scrape lies between the launch and the first
  # /readyz, advanced by the real time to the scrape (scale 1); the window
  # opens at 00:00. One second of slack for rounding and the request.
  local lo hi
  read -r lo hi < <(awk -v w="$(epoch "$WINDOW")" -v s="${CTL_SIM0[a]}" -v ts="$ts" \
    -v t0="${CTL_T0[a]}" -v tr="${CTL_TREADY[a]}" \
    'BEGIN { printf "%.3f %.3f", w - (s + ts - t0 / 1e6) - 1, w - (s + ts - tr / 1e6) + 1 }')
  if [ -n "$ts" ]; then
    in_range "restricted: $(val HostedCluster restricted) s to Saturday 00:00 at the scrape ($lo..$hi)" \
      "$(val HostedCluster restricted)" "$lo" "$hi"
    in_range "restricted-np: $(val NodePool restricted-np) s to Saturday 00:00 at the scrape ($lo..$hi)" \
      "$(val NodePool restricted-np)" "$lo" "$hi"
  else
    not_ok "the sample of restricted has a timestamp"
  fi
  check_eq "policy_ready per policy" "$ns/broken=0 $ns/frozen=1 $ns/weekly=1" \
    "$(query "change_management_policy_ready{namespace=\"$ns\"}" |
      jq -r '[.[] | "\(.metric.namespace)/\(.metric.policy)=\(.value[1])"] | sort | join(" ")')"

  # ---- the alert rules
  local rules nrules
  rules=$(prom /api/v1/rules)
  nrules=$(grep -c '^ *- alert: ' "$RULES")
  check_eq "every rule of alerts.yaml is loaded" "$nrules" \
    "$(jq '[.data.groups[].rules[] | select(.type == "alerting")] | length' <<<"$rules")"
  check_eq "every rule evaluates with health ok" "" \
    "$(jq -r '.data.groups[].rules[] | select(.health != "ok") | "\(.name): \(.health) \(.lastError)"' <<<"$rules")"
  check "every rule has been evaluated" wait_for 5 rules_evaluated
  EVENTUALLY=10 eventually "HCPChangesPendingWindowSoon is pending for restricted" \
    "$ns/restricted pending" active_alerts HCPChangesPendingWindowSoon
  EVENTUALLY=5 eventually "HCPNoPermittedWindow is pending for frozen only (held is Restrictive)" \
    "$ns/frozen pending" active_alerts HCPNoPermittedWindow
  EVENTUALLY=5 eventually "HCPPolicyNotReady is pending for broken" \
    "$ns/broken pending" active_alerts HCPPolicyNotReady
  # The controller group can have been evaluated before the first scrape
  # (absent(up == 1) holds then, and the alert is briefly pending): it must
  # clear once an evaluation sees the target up.
  EVENTUALLY=5 eventually "HCPControllerDown is not active while the target is up" "" \
    active_alerts HCPControllerDown ||
    echo "# up over the last 30 s: $(query 'up{job="hcp-controller"}[30s]' | jq -c '[.[].values[] | .[1]]')," \
      "last scrape error: $(prom /api/v1/targets | jq -c '.data.activeTargets[0].lastError')"
  now_is "HCPControllerNoLeader is not active" "" active_alerts HCPControllerNoLeader
  now_is "HCPChangesPendingNoWindow is not active" "" active_alerts HCPChangesPendingNoWindow

  # The controller stops: the target goes down and HCPControllerDown is pending.
  stop_ctl a
  EVENTUALLY=10 eventually "HCPControllerDown is pending once the controller stops" \
    "- pending" active_alerts HCPControllerDown
  stop_prometheus
}

PROM_ROLE=ctl-e2e-$$-prometheus
remove_prom_role() { k delete clusterrolebinding,clusterrole "$PROM_ROLE" --ignore-not-found >/dev/null 2>&1; }

begin_suite
trap 'stop_prometheus; remove_prom_role; cleanup_all' EXIT
for tool in "$PROMETHEUS" "$PROMTOOL"; do
  if ! command -v "$tool" >/dev/null; then
    echo "no $tool (Debian package prometheus; scripts/install-deps.sh installs it)"
    echo "0 passed, 1 failed"
    exit 1
  fi
done
run_scenario live_scrape
summary
