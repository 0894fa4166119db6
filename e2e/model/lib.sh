# Helpers to run the HyperShift / Cluster API behaviour model (hcp-model)
# beside a test: start it, read its record, stop it. Sourced after
# e2e/controller/lib.sh (it uses KCFG, CTL_TMP, wait_for, now_us).
# shellcheck shell=bash disable=SC2034

MODEL_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODEL_BIN=${HCP_MODEL_BIN:-$("$MODEL_LIB_DIR/build.sh" --path)}
MODEL_PID="" MODEL_PORT="" MODEL_T0="" MODEL_RC=""
MODEL_REC=$CTL_TMP/model-record.jsonl
MODEL_LOG=$CTL_TMP/model.log
MODEL_OUT=$CTL_TMP/model.out

# model_start NS START SCALE [ANCHOR-US [FLAGS...]]: runs the model for
# namespace NS with the simulated clock reading START (RFC 3339) at the real
# instant ANCHOR-US (microseconds since the epoch, as now_us prints; default
# now) and running SCALE times real time; waits until its informers have
# synced. To share a controller's clock, pass the controller's CTL_T0 (the
# instant just before it was launched) with its START and SCALE.
model_start() {
  local ns=$1 start=$2 scale=$3 anchor=${4:-}
  shift 3
  [ $# -gt 0 ] && shift
  # As start_ctl does: a scenario run again on a slow machine (CTL_SLOW).
  scale=$(awk -v s="$scale" -v d="${CTL_SLOW:-1}" 'BEGIN { printf "%g", s / d }')
  [ -n "$anchor" ] || anchor=$(now_us)
  local pf=$CTL_TMP/model.port
  rm -f "$pf"
  MODEL_T0=$anchor
  "$MODEL_BIN" --kubeconfig "$KCFG" --namespace "$ns" --simulated-start-time "$start" \
    --time-scale "$scale" --clock-anchor "${anchor:0:-6}.${anchor: -6}" --record-file "$MODEL_REC" \
    --port-file "$pf" "$@" >"$MODEL_OUT" 2>"$MODEL_LOG" &
  MODEL_PID=$!
  if ! wait_for 30 test -s "$pf"; then
    tail -20 "$MODEL_LOG" | sed 's/^/#   /' >&2
    return 1
  fi
  MODEL_PORT=$(cat "$pf")
}

# model_stop: SIGTERM, waits; the exit status goes to MODEL_RC and the final
# summary (JSON) is in $MODEL_OUT.
model_stop() {
  [ -n "$MODEL_PID" ] || return 0
  kill -TERM "$MODEL_PID" 2>/dev/null
  wait "$MODEL_PID"
  MODEL_RC=$?
  MODEL_PID=""
}

# model_alive: the model still runs.
model_alive() { [ -n "$MODEL_PID" ] && kill -0 "$MODEL_PID" 2>/dev/null; }

# model_records: the record so far, one JSON object a line.
model_records() { curl -sf --max-time 5 "http://127.0.0.1:$MODEL_PORT/records"; }
# model_summary: counts per event and object, writes per object (JSON).
model_summary() { curl -sf --max-time 5 "http://127.0.0.1:$MODEL_PORT/summary"; }
# model_count EVENT OBJECT: records of EVENT about OBJECT ("ns/name"); the
# object is the HostedCluster for control-plane events, the
# MachineDeployment or MachineSet (control-plane namespace) for machines.
model_count() {
  model_records | jq -s --arg e "$1" --arg o "$2" '[.[] | select(.event == $e and .object == $o)] | length'
}
# model_times EVENT OBJECT: the simulated times of those records, one a line.
model_times() {
  model_records | jq -r --arg e "$1" --arg o "$2" 'select(.event == $e and .object == $o) | .at'
}

# ---- scenarios with the model and the admission webhooks ----------------------------

# holds_webhook_config PORT NS...: the three holds (webhook_config of
# e2e/controller/lib.sh) with failurePolicy $WH_FAILURE_POLICY (default
# Fail).
holds_webhook_config() {
  local port=$1
  shift
  webhook_config MutatingWebhookConfiguration UPDATE "$port" "$@" -- \
    hostedclusters:/hold/hostedclusters:hypershift.openshift.io:hostedclusters \
    machinedeployments:/hold/machinedeployments:cluster.x-k8s.io:machinedeployments \
    machinesets:/hold/machinesets:cluster.x-k8s.io:machinesets |
    jq -c --arg fp "${WH_FAILURE_POLICY:-Fail}" '.webhooks |= map(.failurePolicy = $fp)'
}

# chart_webhook_config PORT NS...: the chart's MutatingWebhookConfiguration
# as `helm template --set webhook.enabled=true` renders it (its failure
# policy and objectSelector), named $WH_NAME, pointed at
# https://127.0.0.1:PORT and limited to the namespaces given.
chart_webhook_config() {
  local port=$1
  shift
  "$CTL_REPO/node_modules/.bin/helm" template hcp "$CTL_REPO/charts/hcp-controller" \
    --set webhook.enabled=true 2>/dev/null |
    yq -s -c 'map(select(. != null and .kind == "MutatingWebhookConfiguration"))[0]' |
    jq -c --arg n "$WH_NAME" --arg u "https://127.0.0.1:$port" --arg ca "$(base64 -w0 "$CERT")" \
      --argjson ns "$(printf '%s\n' "$@" | jq -R . | jq -sc .)" '
      .metadata = {name: $n}
      | .webhooks |= map(.clientConfig = {url: ($u + .clientConfig.service.path), caBundle: $ca}
          | .namespaceSelector = {matchExpressions: [{key: "kubernetes.io/metadata.name",
                                                      operator: "In", values: $ns}]})'
}
