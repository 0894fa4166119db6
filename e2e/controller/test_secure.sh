#!/usr/bin/env bash
# Controller scenario about who may read /metrics and the calendar feed:
# served over HTTPS, each caller's bearer token checked by the API server
# (TokenReview) and its right by the API server (SubjectAccessReview), as
# controller-runtime's secure metrics server does. Real ServiceAccounts,
# tokens from the TokenRequest API, RBAC rules:
#   scraper: a ClusterRole granting "get" on the non-resource URL /metrics;
#   viewer:  a Role granting "get" on hostedclusters in one namespace;
#   nobody:  no rule.
# Checks the answers (401 without or with a forged token, 403 without the
# right, 200 with it; a calendar of a namespace the caller may not read:
# 403), that a verdict is kept for a short time (one pair of reviews for a
# run of scrapes), the self-signed default, and --metrics-secure=false.
#
# Needs the "main" instance (e2e/cluster.sh up main) and build/hcp-controller.
# CTL_E2E_ONLY="fn ..." runs only the named scenarios. Prints "N passed, N failed".
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

# mk_metrics_cert: a certificate for the metrics server on 127.0.0.1.
mk_metrics_cert() {
  MCERT=$CTL_TMP/metrics.crt MKEY=$CTL_TMP/metrics.key
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 1 -nodes \
    -subj /CN=hcp-controller-metrics -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$MKEY" -out "$MCERT" 2>/dev/null
}

# fetch NAME PATH [TOKEN] [CURL-ARGS...]: GET over HTTPS trusting $MCERT;
# prints the status, the body goes to $CTL_TMP/body, the headers to
# $CTL_TMP/headers.
fetch() {
  local name=$1 path=$2 token=${3:-}
  shift 3 2>/dev/null || shift $#
  local args=(-s --max-time 10 -o "$CTL_TMP/body" -D "$CTL_TMP/headers" -w '%{http_code}')
  [ -n "$token" ] && args+=(-H "Authorization: Bearer $token")
  curl "${args[@]}" --cacert "$MCERT" "$@" "https://127.0.0.1:${CTL_MPORT[$name]}$path"
}

# mk_sa NS NAME: a ServiceAccount; its token (TokenRequest) in TOK[NAME].
declare -A TOK
mk_sa() {
  k -n "$1" create serviceaccount "$2" >/dev/null 2>&1 || return 1
  TOK[$2]=$(k -n "$1" create token "$2" --duration 1h) && [ -n "${TOK[$2]}" ]
}

# The controller's request counts of one verb and code, summed.
creates() { metrics_of "$1" | awk '/^hcp_controller_api_requests_total\{verb="create",code="201"\}/ { s += $2 } END { print s + 0 }'; }
metrics_of() { curl -s --max-time 5 --cacert "$MCERT" -H "Authorization: Bearer ${TOK[scraper]}" \
  "https://127.0.0.1:${CTL_MPORT[$1]}/metrics"; }

CLUSTER_OBJS=()
secure_endpoints() {
  local ns nsb code t0 t1 n0 n1 n2
  ns=$(new_ns sec) || return
  nsb=$(new_ns sec-b) || return
  must mk_policy "$ns" weekly "$(weekly_policy Saturday 00:00 10m)" || return
  must mk_hc "$ns" hc1 policy=weekly || return
  must mk_hc "$nsb" hc1 strategy=Restrictive || return
  must mk_sa "$ns" scraper || return
  must mk_sa "$ns" viewer || return
  must mk_sa "$ns" nobody || return
  local reader="ctl-e2e-$$-metrics-reader"
  CLUSTER_OBJS+=("clusterrole/$reader" "clusterrolebinding/$reader")
  must k create clusterrole "$reader" --verb=get --non-resource-url=/metrics || return
  must k create clusterrolebinding "$reader" --clusterrole="$reader" --serviceaccount="$ns:scraper" || return
  must k -n "$ns" create role hc-reader --verb=get --resource=hostedclusters.hypershift.openshift.io || return
  must k -n "$ns" create rolebinding hc-reader --role=hc-reader --serviceaccount="$ns:viewer" || return
  mk_metrics_cert || { not_ok "setup: certificate"; return; }
  start_ctl a "$ns" 2026-03-06T23:50:00Z 1 --metrics-secure=true \
    --metrics-cert-file "$MCERT" --metrics-key-file "$MKEY" || { not_ok "controller starts"; return; }

  # ---- /metrics
  check_eq "/metrics without a token: 401" 401 "$(fetch a /metrics)"
  check "the 401 says how to authenticate (WWW-Authenticate: Bearer)" \
    grep -qi '^WWW-Authenticate: Bearer' "$CTL_TMP/headers"
  check_eq "/metrics with a forged token: 401" 401 "$(fetch a /metrics forged.token.value)"
  check_eq "/metrics with the token of a ServiceAccount without the right: 403" 403 \
    "$(fetch a /metrics "${TOK[nobody]}")"
  check_contains "the 403 names the caller" "system:serviceaccount:$ns:nobody" "$(cat "$CTL_TMP/body")"
  check_eq "/metrics with a Role for hostedclusters only: 403" 403 "$(fetch a /metrics "${TOK[viewer]}")"
  check_eq "/metrics with get on the URL /metrics: 200" 200 "$(fetch a /metrics "${TOK[scraper]}")"
  check "the scrape holds the controller's families" grep -q '^hcp_controller_leader ' "$CTL_TMP/body"
  check_eq "HEAD /metrics with the right: 200" 200 "$(fetch a /metrics "${TOK[scraper]}" -I)"
  check "plain HTTP to the metrics port gets no metrics" \
    bash -c "! curl -sf --max-time 5 http://127.0.0.1:${CTL_MPORT[a]}/metrics >/dev/null"

  # ---- /calendar/
  check_eq "calendar of a namespace with get hostedclusters there: 200" 200 \
    "$(fetch a "/calendar/$ns.ics" "${TOK[viewer]}")"
  check "it is a calendar" grep -q '^BEGIN:VCALENDAR' "$CTL_TMP/body"
  check_eq "one HostedCluster's calendar there: 200" 200 "$(fetch a "/calendar/$ns/hc1.ics" "${TOK[viewer]}")"
  check_eq "calendar of a namespace the caller may not read: 403" 403 \
    "$(fetch a "/calendar/$nsb.ics" "${TOK[viewer]}")"
  check_eq "one HostedCluster's calendar there: 403" 403 "$(fetch a "/calendar/$nsb/hc1.ics" "${TOK[viewer]}")"
  check_eq "the /metrics right does not open calendars: 403" 403 \
    "$(fetch a "/calendar/$ns.ics" "${TOK[scraper]}")"
  check_eq "calendar without a token: 401" 401 "$(fetch a "/calendar/$ns.ics")"
  check_eq "a path that names no calendar: 404" 404 "$(fetch a "/calendar/$ns" "${TOK[viewer]}")"

  # ---- verdicts kept: a new token costs one pair of reviews (TokenReview,
  # SubjectAccessReview: two creates answered 201), then none for the
  # verdict's 10 s. The counts come from scrapes with the scraper's token,
  # kept itself.
  must mk_sa "$ns" scraper2 || return
  must k create clusterrolebinding "$reader-2" --clusterrole="$reader" --serviceaccount="$ns:scraper2" || return
  CLUSTER_OBJS+=("clusterrolebinding/$reader-2")
  n0=$(creates a)
  check_eq "a new token's first scrape: 200" 200 "$(fetch a /metrics "${TOK[scraper2]}")"
  n1=$(creates a)
  check_eq "a new token's first scrape asks the API server twice" 2 "$((n1 - n0))"
  t0=$(now_us)
  for _ in 1 2 3 4 5 6 7 8 9 10; do code=$(fetch a /metrics "${TOK[scraper2]}"); done
  t1=$(now_us)
  n2=$(creates a)
  check_eq "10 more scrapes within the verdict's 10 s: 200" 200 "$code"
  check_eq "they ask the API server nothing (verdict kept)" 0 "$((n2 - n1))"
  echo "# 10 authorized scrapes: $(((t1 - t0) / 10000)) ms each on average (load $(cut -d' ' -f1 /proc/loadavg))"

  # ---- a renewed certificate (a rotated Secret) is served without a restart
  local old=$CTL_TMP/metrics-old.crt
  cp "$MCERT" "$old"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 1 -nodes \
    -subj /CN=hcp-controller-metrics-renewed -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$CTL_TMP/new.key" -out "$CTL_TMP/new.crt" 2>/dev/null || { not_ok "setup: renewed certificate"; return; }
  cp "$CTL_TMP/new.key" "$MKEY.tmp" && mv "$MKEY.tmp" "$MKEY"
  cp "$CTL_TMP/new.crt" "$MCERT.tmp" && mv "$MCERT.tmp" "$MCERT"
  metrics_cert_renewed() { [ "$(fetch a /metrics "${TOK[scraper]}")" = 200 ]; }
  if wait_for 10 metrics_cert_renewed; then ok "the renewed certificate is served (same process, pid ${CTL_PID[a]})"; else
    not_ok "the renewed certificate is served" "$(tail -3 "${CTL_LOG[a]}" | tr '\n' ' ')"
  fi
  check "the old certificate is no longer served" \
    bash -c "! curl -s --max-time 5 --cacert '$old' https://127.0.0.1:${CTL_MPORT[a]}/metrics >/dev/null 2>&1"
  check "the controller logged the renewal" grep -q 'serving the renewed metrics certificate' "${CTL_LOG[a]}"

  # ---- the default: a self-signed certificate
  start_ctl b "$ns" 2026-03-06T23:50:00Z 1 --metrics-secure || { not_ok "controller b starts"; return; }
  check "self-signed: a client that verifies refuses the certificate" \
    bash -c "! curl -sf --max-time 5 --cacert '$MCERT' https://127.0.0.1:${CTL_MPORT[b]}/metrics >/dev/null 2>&1"
  check_eq "self-signed: /metrics with the right (certificate not verified): 200" 200 \
    "$(fetch b /metrics "${TOK[scraper]}" -k)"
  check_eq "self-signed: without a token: 401" 401 "$(fetch b /metrics "" -k)"

  # ---- --metrics-secure=false: plain HTTP, no checks (the other suites)
  start_ctl c "$ns" 2026-03-06T23:50:00Z 1 || { not_ok "controller c starts"; return; }
  check_eq "--metrics-secure=false: plain HTTP without a token: 200" 200 \
    "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:${CTL_MPORT[c]}/metrics")"
  check "--metrics-secure=false is said in the log" grep -q 'plain HTTP' "${CTL_LOG[c]}"
}

cleanup_secure() {
  local o
  for o in "${CLUSTER_OBJS[@]}"; do k delete "$o" --ignore-not-found >/dev/null 2>&1; done
}

begin_suite
trap 'cleanup_secure; cleanup_all' EXIT
run_scenario secure_endpoints
summary
