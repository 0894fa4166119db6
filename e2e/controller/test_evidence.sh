#!/usr/bin/env bash
# Release waves across management clusters (DESIGN.md 3.14,
# pkg/decide/evidence.h): two management clusters, each a real
# kube-apiserver over its own etcd ("main" and a second instance), each with
# its controller and its own waves' file naming it (mc-a, mc-b). Each
# controller publishes what its clusters of the waves completed and how they
# are, as a labelled ConfigMap in its evidence namespace, and reads every
# such ConfigMap there as more clusters of the waves. A loop copying the
# ConfigMaps from one API server to the other plays the hub (ACM, a GitOps
# repository): nothing of ours joins the two.
#
# The canary wave lives on mc-a, the early wave on mc-b. A release held on
# mc-b's early clusters waits for the canary on mc-a: WaitingForSoak naming
# mc-a's canary while it has not completed the release; the soak's end once
# it has; WaveHalted when that canary turns Degraded, and back when it is
# healthy; still held inside an open window before the soak's end; let
# through within 2 s (real) of it. A broken evidence ConfigMap is ignored
# with a log line, and the waves go on.
#
# Needs the "main" instance and brings up (and afterwards stops, when it
# started it) the second, CTL_E2E_EVIDENCE_INSTANCE (default
# "model-evidence": a management instance as "main" is).
set -uo pipefail
# shellcheck source=e2e/controller/lib.sh
. "$(dirname "$0")/lib.sh"

B_INSTANCE=${CTL_E2E_EVIDENCE_INSTANCE:-model-evidence}
REL0=quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64
REL=quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64
DAILY='{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"timeZone": "UTC",
  "permit": {"rrule": "FREQ=DAILY", "startTime": "06:00", "duration": "2h"}}}'
SIM0=2026-03-02T05:50:00Z # a Monday, ten simulated minutes before the window
SCALE=60                  # simulated seconds per real second
B_STARTED=""
HUB_PID=""

# The second management cluster's environment: on_b CMD... runs CMD
# against it (api, k, get and mk_* read these).
load_b() {
  local k v
  while IFS='=' read -r k v; do
    case $k in
      HCP_E2E_SERVER) B_SERVER=$v ;;
      HCP_E2E_CA) B_CA=$v ;;
      HCP_E2E_KUBECONFIG) B_KCFG=$v ;;
      HCP_E2E_ADMIN_TOKEN_FILE) B_TOKEN=$(cat "$v") ;;
    esac
  done < <("$CTL_REPO/e2e/cluster.sh" env "$B_INSTANCE" 2>/dev/null)
  [ -n "${B_SERVER:-}" ] && [ -n "${B_TOKEN:-}" ]
}
on_b() {
  E_SERVER=$B_SERVER E_CA=$B_CA ADMIN_TOKEN=$B_TOKEN KCFG=$B_KCFG CTL_NSFILE=$CTL_TMP/ns-b "$@"
}

# copy_evidence SOURCE FROM-NS TO-NS TO...: the hub's copy of SOURCE's
# evidence ConfigMap (read from the current API server's FROM-NS) into TO-NS
# on the API server TO... names (on_b or plain), as an apply of its own.
copy_evidence() {
  local src=$1 from=$2 to=$3 cm body
  shift 3
  cm=$(api GET "/api/v1/namespaces/$from/configmaps/hcp-wave-evidence-$src" 2>/dev/null) || return 0
  body=$(jq -c --arg ns "$to" '{apiVersion: "v1", kind: "ConfigMap",
    metadata: {name: .metadata.name, namespace: $ns, labels: .metadata.labels}, data: .data}' <<<"$cm") || return 0
  "$@" api PATCH "/api/v1/namespaces/$to/configmaps/hcp-wave-evidence-$src?fieldManager=fleet-hub&force=true" \
    "$body" application/apply-patch+yaml >/dev/null 2>&1
}
# hub EVA EVB: copies mc-a's evidence to mc-b and mc-b's to mc-a, every
# 0.3 s, until stopped.
hub() {
  while :; do
    copy_evidence mc-a "$1" "$2" on_b
    on_b copy_evidence mc-b "$2" "$1"
    sleep 0.3
  done
}
hub_stop() { [ -n "$HUB_PID" ] && kill "$HUB_PID" 2>/dev/null && wait "$HUB_PID" 2>/dev/null; HUB_PID=""; }

# guard FILE NAME NS [PORT]: the waves' file of management cluster NAME, its
# evidence in NS; notifications to a receiver on PORT when given.
guard() {
  {
    [ -z "${4:-}" ] || printf 'notifications:\n  endpoints: [{name: recv, url: "http://127.0.0.1:%s/hook"}]\n' "$4"
    cat <<YAML
waves:
  sequence:
    - name: canary
      selector: {matchLabels: {fleet.example.com/wave: canary}}
    - name: early
      selector: {matchLabels: {fleet.example.com/wave: early}}
      soak: 20m
  evidence: {name: $2, namespace: $3}
YAML
  } >"$1"
}
# told STEP: the notifications of STEP the receiver took, as "N first-detail".
told() {
  local f n=0 first=""
  for f in "$RECV_DIR"/*.json; do
    [ -e "$f" ] || continue
    if [ "$(jq -r .data.step "$f")" = "$1" ]; then
      n=$((n + 1))
      [ -n "$first" ] || first=$(jq -r .data.detail "$f")
    fi
  done
  echo "$n $first"
}
told_n() { told "$1" | cut -d' ' -f1; }

# start_mc NAME NS GUARD [KUBECONFIG]: a controller for namespace NS with
# the waves of GUARD (the guard rails are the webhooks' configuration; no
# webhook configuration names this one, so nothing is sent to it).
start_mc() {
  CTL_CONTROLLER_KUBECONFIG=${4:-$KCFG} start_ctl "$1" "$2" "$SIM0" "$SCALE" \
    --guard-config "$3" --webhook-bind-address 127.0.0.1:0 --webhook-cert-file "$CERT" \
    --webhook-key-file "$KEY" -v 2
}

evidence_of() { get "/api/v1/namespaces/$1/configmaps/hcp-wave-evidence-$2" '.data["evidence.json"] | fromjson | [.members[].cluster] | join(",")'; }
wave_of() { get "$(hcms_path "$1" hostedcluster "$2")" ".status.wave.$3"; }
msg_of() { get "$(hc_path "$1" "$2")" '.status.conditions // [] | map(select(.type == "ChangesPaused")) | .[0].message // ""'; }
has_msg() { [[ "$(msg_of "$1" "$2")" == *"$3"* ]] && echo yes; }

across_clusters() {
  local nsa nsb eva evb
  nsa=$(new_ns fleet-a) || return
  eva=$(new_ns evidence-a) || return
  nsb=$(on_b new_ns fleet-b) || return
  evb=$(on_b new_ns evidence-b) || return
  mk_webhook_cert
  must mk_policy "$nsa" daily "$DAILY" || return
  must mk_hc "$nsa" canary-1 policy=daily || return
  must k label hostedcluster -n "$nsa" canary-1 fleet.example.com/wave=canary || return
  must on_b mk_policy "$nsb" daily "$DAILY" || return
  must on_b mk_hc "$nsb" early-1 policy=daily requested-release-image="$REL" || return
  must on_b k label hostedcluster -n "$nsb" early-1 fleet.example.com/wave=early || return
  RECV_DIR=$CTL_TMP/recv
  mkdir -p "$RECV_DIR"
  local port
  port=$(free_port)
  recv_start "$RECV_DIR" "$port"
  guard "$CTL_TMP/guard-a.yaml" mc-a "$eva"
  guard "$CTL_TMP/guard-b.yaml" mc-b "$evb" "$port"
  start_mc a "$nsa" "$CTL_TMP/guard-a.yaml" || { not_ok "controller of mc-a starts"; return; }
  start_mc b "$nsb" "$CTL_TMP/guard-b.yaml" "$B_KCFG" || { not_ok "controller of mc-b starts"; return; }
  hub "$eva" "$evb" &
  HUB_PID=$!

  # Each publishes its own clusters; the hub brings the other's.
  EVENTUALLY=10 eventually "mc-a publishes its canary" "$nsa/canary-1" evidence_of "$eva" mc-a
  EVENTUALLY=10 eventually "mc-b publishes its early cluster" "$nsb/early-1" on_b evidence_of "$evb" mc-b
  EVENTUALLY=10 eventually "the hub copied mc-a's evidence to mc-b" "$nsa/canary-1" on_b evidence_of "$evb" mc-a
  EVENTUALLY=10 eventually "mc-b's early cluster waits for mc-a's canary" yes \
    on_b has_msg "$nsb" early-1 "wave early waits for wave canary: 4.18.1 completed on 0 of the 1 clusters it needs (not yet on mc-a:$nsa/canary-1)"

  # HyperShift completes 4.18.1 on mc-a's canary (its history entry):
  # the soak ends 20 minutes after.
  must set_hc_history "$nsa" canary-1 Completed "$REL" || return
  must api PATCH "$HS/namespaces/$nsa/hostedclusters/canary-1/status" \
    '[{"op": "replace", "path": "/status/version/history/0/completionTime", "value": "2026-03-02T05:51:00Z"},
      {"op": "replace", "path": "/status/version/history/0/version", "value": "4.18.1"}]' \
    application/json-patch+json || return
  EVENTUALLY=10 eventually "mc-b learns the soak's end from mc-a's canary" 2026-03-02T06:11:00Z \
    on_b wave_of "$nsb" early-1 until

  # The canary turns Degraded: mc-b's early wave halts, naming it.
  local t0
  EVENTUALLY=5 eventually "soak-waiting told to mc-b's endpoint, once per soak end known" 2 \
    told_n soak-waiting
  t0=$(now_us)
  must set_hc_health "$nsa" canary-1 True True 2026-03-02T05:55:00Z || return
  EVENTUALLY=5 eventually "a Degraded canary on mc-a halts mc-b's early wave" WaveHalted \
    on_b wave_of "$nsb" early-1 state &&
    echo "# the halt reached mc-b's record $((($(now_us) - t0) / 1000)) ms after the canary's status write (hub period 0.3 s, publication at most 1/s)"
  check_contains "the halt names the canary across management clusters" \
    "mc-a:$nsa/canary-1 of wave canary runs 4.18.1 and is unhealthy since 2026-03-02T05:55:00Z" \
    "$(on_b msg_of "$nsb" early-1)"
  EVENTUALLY=1 eventually "wave-halted told within 1 s of mc-b's verdict" 1 told_n wave-halted &&
    echo "# wave-halted received $((($(now_us) - t0) / 1000)) ms after the canary's status write on mc-a"
  check_contains "wave-halted names the canary" "mc-a:$nsa/canary-1 of wave canary" "$(told wave-halted)"
  must set_hc_health "$nsa" canary-1 True False 2026-03-02T05:58:00Z || return
  EVENTUALLY=5 eventually "healthy again: back to the soak" WaitingForSoak \
    on_b wave_of "$nsb" early-1 state
  EVENTUALLY=1 eventually "wave-resumed told once, within 1 s" 1 told_n wave-resumed
  check_eq "wave-halted told once" 1 "$(told_n wave-halted)"

  # The window is open from 06:00; the soak ends at 06:11.
  sleep_until_sim b 2026-03-02T06:05:00Z
  if before_sim b 2026-03-02T06:10:00Z; then
    check_eq "inside the open window, before the soak's end: still held" "$REL0|WaitingForSoak" \
      "$(on_b get "$(hc_path "$nsb" early-1)" .spec.release.image)|$(on_b wave_of "$nsb" early-1 state)"
  else
    not_ok "inside the open window, before the soak's end: still held" \
      "the check ran at simulated $(rfc3339 "$(sim_lo b | cut -d. -f1)"), too late (machine too slow?)"
  fi
  # Watched until just before the soak's end: never let through early.
  local early=""
  while before_sim b 2026-03-02T06:10:55Z; do
    [ "$(on_b get "$(hc_path "$nsb" early-1)" .spec.release.image)" = "$REL0" ] ||
      { early=$(rfc3339 "$(sim_lo b | cut -d. -f1)"); break; }
    sleep 0.1
  done
  check_eq "not let through before the soak's end" "" "$early"
  sleep_until_sim b 2026-03-02T06:11:00Z
  EVENTUALLY=2 eventually "let through within 2 s of the soak's end" "$REL" \
    on_b get "$(hc_path "$nsb" early-1)" .spec.release.image

  # A broken evidence ConfigMap is ignored, said in the log; the waves go on.
  must on_b api POST "/api/v1/namespaces/$evb/configmaps" "$(jq -nc --arg l "$CM/wave-evidence" \
    '{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "hcp-wave-evidence-mc-z", labels: {($l): "mc-z"}},
      data: {"evidence.json": "{\"source\": \"mc-z\", \"members\": [{\"system\": \"Machine\"}]}"}}')" \
    application/json || return
  EVENTUALLY=5 eventually "a broken evidence ConfigMap is ignored, saying why" 1 \
    grep -c 'evidence ignored.*hcp-wave-evidence-mc-z.*members\[0\]' "${CTL_LOG[b]}"
  check "the controller of mc-b goes on" ctl_alive b
  hub_stop
  recv_stop
  on_b delete_namespaces
}

begin_suite
load_b_or_up() {
  if ! "$CTL_REPO/e2e/cluster.sh" running "$B_INSTANCE" 2>/dev/null; then
    "$CTL_REPO/e2e/cluster.sh" up "$B_INSTANCE" >"$CTL_TMP/up-b.log" 2>&1 || return 1
    B_STARTED=1
  fi
  load_b
}
if ! load_b_or_up; then
  echo "# the second management instance $B_INSTANCE did not come up:"
  tail -5 "$CTL_TMP/up-b.log" 2>/dev/null | sed 's/^/#   /'
  echo "0 passed, 1 failed"
  exit 1
fi
trap 'hub_stop; recv_stop; [ -n "$B_STARTED" ] && "$CTL_REPO/e2e/cluster.sh" down "$B_INSTANCE" >/dev/null 2>&1; cleanup_all' EXIT
run_scenario across_clusters
summary
