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

# model_scenario_start NAME [FLAGS...]: the start of a webhook scenario
# beside the model: controller NAME for $NS from $SIM0 at $SCALE with its
# webhooks on 127.0.0.1:$WPORT ($CERT, $KEY), then the model on its clock
# with FLAGS; when either does not start, the summary and the script's end.
model_scenario_start() {
  local name=$1
  shift
  start_ctl "$name" "$NS" "$SIM0" "$SCALE" --webhook-bind-address "127.0.0.1:$WPORT" \
    --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { summary; exit 1; }
  model_start "$NS" "$SIM0" "$SCALE" "${CTL_T0[$name]}" "$@" || {
    not_ok "model started"
    summary
    exit 1
  }
}

# Reconciles HyperShift runs at once per controller: its NodePool controller
# has MaxConcurrentReconciles 10 (hypershift-operator/controllers/nodepool/
# nodepool_controller.go, SetupWithManager). A suite that times several
# pools' starts at one boundary runs the model with --workers "$HS_WORKERS",
# so that a pool's start does not wait behind the others' reconciles, as it
# would not on a management cluster.
HS_WORKERS=10

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
  # On an instance running Cluster API's own controllers (e2e/cluster.sh
  # "capi"), only the model's HyperShift half acts.
  if [ "${E_CAPI:-}" = 1 ]; then set -- --real-capi "$@"; fi
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
# model_writes S0 S1 KEY [FIELD]: updates of KEY ("Kind ns/name") between
# two model summaries: the model's own writes (FIELD writes, the default) or
# all it saw (observed: beside Cluster API's own controllers, their status
# writes too).
model_writes() {
  jq -n --argjson a "$1" --argjson b "$2" --arg k "$3" --arg f "${4:-writes}" '($b[$f][$k] // 0) - ($a[$f][$k] // 0)'
}
# check_rollout_starts WHAT TOL START_TOL EVENT-OBJECT...: for each "EVENT
# ns/pool", the model's first record of it (of machineset-created the
# pool's last: its first is the pool's own MachineSet) is not before $OPEN
# and within TOL real seconds (real_s) of it on controller a's clock ($SIM0 at
# CTL_T0[a]); within START_TOL for a replacement-start, whose Machine
# Cluster API's own MachineSet controller makes two to three seconds after
# its MachineSet. WHAT names the boundary in the lines.
check_rollout_starts() {
  local what=$1 tol=$2 start_tol=$3 b ev first at real lag t
  shift 3
  b=$(ctl_real_at a "$OPEN")
  for ev in "$@"; do
    first=$(model_records | jq -cs --arg e "${ev% *}" --arg o "${ev#* }" '[.[] | select(.event == $e and .object == $o)] |
      sort_by(.at) | if $e == "machineset-created" then .[-1] else .[0] end')
    at=$(jq -r .at <<<"$first") real=$(jq -r .real <<<"$first")
    lag=$(awk -v r="$(date -u -d "$real" +%s.%N 2>/dev/null || echo 0)" -v b="$b" 'BEGIN { printf "%.3f", r - b }')
    echo "# figure: $what open -> first ${ev% *} of ${ev#* }: $lag s real (simulated $at; boundary on the controller's clock, load average $(cut -d' ' -f1 /proc/loadavg))"
    check "${ev#* }: not before the $what (simulated $at)" eval '[[ $(epoch "$at") -ge $(epoch "$OPEN") ]]'
    t=$tol
    [ "${ev% *}" = replacement-start ] && t=$start_tol
    t=$(real_s "$t")
    in_range "${ev#* }: ${ev% *} within $t s (real) of the $what opening" "$lag" 0 "$t"
  done
}
# model_count EVENT OBJECT: records of EVENT about OBJECT ("ns/name"); the
# object is the HostedCluster for control-plane events, the
# MachineDeployment or MachineSet (control-plane namespace) for machines.
model_count() {
  model_records | jq -s --arg e "$1" --arg o "$2" '[.[] | select(.event == $e and .object == $o)] | length'
}
# model_count_before EVENT OBJECT RFC3339: the records counted by
# model_count whose simulated time is before the instant (however late
# they are read).
model_count_before() {
  model_records | jq -s --arg e "$1" --arg o "$2" --arg t "$3" \
    '[.[] | select(.event == $e and .object == $o and .at < $t)] | length'
}
# model_times EVENT OBJECT: the simulated times of those records, one a line.
model_times() {
  model_records | jq -r --arg e "$1" --arg o "$2" 'select(.event == $e and .object == $o) | .at'
}

# ---- scenarios with the model and the admission webhooks ----------------------------

# holds_webhook_config PORT NS...: the four holds (webhook_config of
# e2e/controller/lib.sh) with failurePolicy $WH_FAILURE_POLICY (default
# Fail), and the ConfigMap hold as the chart has it (UPDATE and DELETE, the
# same objectSelector and failurePolicy, sent deletions and content changes
# only).
holds_webhook_config() {
  local port=$1
  shift
  webhook_config MutatingWebhookConfiguration UPDATE "$port" "$@" -- \
    hostedclusters:/hold/hostedclusters:hypershift.openshift.io:hostedclusters \
    nodepools:/hold/nodepools:hypershift.openshift.io:nodepools \
    machinedeployments:/hold/machinedeployments:cluster.x-k8s.io:machinedeployments \
    machinesets:/hold/machinesets:cluster.x-k8s.io:machinesets \
    configmaps:/hold/configmaps::configmaps |
    jq -c --arg fp "${WH_FAILURE_POLICY:-Fail}" '.webhooks |= map(.failurePolicy = $fp
      | if .clientConfig.url | endswith("/hold/configmaps") then
          .rules[0].operations = ["UPDATE", "DELETE"]
          | .matchConditions = [{name: "content-changed-or-deleted", expression:
              ("request.operation == \u0027DELETE\u0027"
               + (["data", "binaryData"] | map(" || (has(object.\(.)) ? [object.\(.)] : []) != (has(oldObject.\(.)) ? [oldObject.\(.)] : [])") | join("")))}]
        else . end)'
}

# chart_webhook_config PORT NS...: the chart's MutatingWebhookConfiguration
# (or $WH_KIND, e.g. ValidatingWebhookConfiguration) as `helm template
# --set webhook.enabled=true` renders it (its failure policy, objectSelector
# and matchConditions), named $WH_NAME, pointed at https://127.0.0.1:PORT
# and limited to the namespaces given. $CHART_DIR renders another copy of
# the chart (an older release's, to compare what each sends).
chart_webhook_config() {
  local port=$1
  shift
  # The chart requires Kubernetes 1.29; render for the release the tests run
  # (KUBE_VERSION of e2e/lib.sh).
  local kv
  # shellcheck source=e2e/lib.sh
  kv=$(. "$CTL_REPO/e2e/lib.sh" && echo "$KUBE_VERSION")
  "$CTL_REPO/node_modules/.bin/helm" template hcp "${CHART_DIR:-$CTL_REPO/charts/hcp-controller}" \
    --kube-version "$kv" --set webhook.enabled=true 2>/dev/null |
    yq -s -c --arg k "${WH_KIND:-MutatingWebhookConfiguration}" 'map(select(. != null and .kind == $k))[0]' |
    jq -c --arg n "$WH_NAME" --arg u "https://127.0.0.1:$port" --arg ca "$(base64 -w0 "$CERT")" \
      --argjson ns "$(printf '%s\n' "$@" | jq -R . | jq -sc .)" '
      .metadata = {name: $n}
      | .webhooks |= map(.clientConfig = {url: ($u + .clientConfig.service.path), caBundle: $ca}
          | .namespaceSelector = {matchExpressions: [{key: "kubernetes.io/metadata.name",
                                                      operator: "In", values: $ns}]})'
}

# ---- run_scenario functions beside the model --------------------------------------

REL0=quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64
REL1=quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64
REL2=quay.io/openshift-release-dev/ocp-release:4.17.2-x86_64

# model_suite_begin: begin_suite of e2e/controller/lib.sh for a suite whose
# scenarios run beside the model with the webhooks: the webhooks' test
# certificate, and a cleanup that also removes the webhook configuration
# $WH_NAME and stops the model. Beside Cluster API's own controllers
# (E_CAPI=1) a pool's machines take real seconds to come up before a
# scenario's first boundary: the scenarios' clocks, chosen for the model,
# run 4 times slower from the first run (CTL_SLOW_BASE of run_scenario,
# unless the suite set it: test_capi.sh's are chosen for Cluster API).
MODEL_CTL_ARGS=()
model_suite_begin() {
  begin_suite
  if [ "${E_CAPI:-}" = 1 ]; then CTL_SLOW_BASE=${CTL_SLOW_BASE:-4}; fi
  trap 'watch_stop; webhook_scenario_cleanup' EXIT
  mk_webhook_cert || { not_ok "test certificate"; summary; exit 1; }
}

# model_scenario NS START SCALE CLUSTERS [MODEL-FLAGS...]: what a scenario
# function runs beside: the holds webhook configuration ($WH_NAME) for NS
# and the control-plane namespaces NS-<cluster> of the CLUSTERS
# (space-separated), a controller "a" serving the webhooks on a port of its
# own, and the model on the controller's clock. MODEL_WEBHOOKS=0: no webhook
# configuration and a controller without webhooks (the pause is the only
# brake). MODEL_CTL_ARGS (an array): more flags for the controller.
model_scenario() {
  local ns=$1 start=$2 scale=$3 c hcps=() port
  for c in $4; do hcps+=("$ns-$c"); done
  shift 4
  if [ "${MODEL_WEBHOOKS:-1}" = 0 ]; then
    k delete mutatingwebhookconfiguration "$WH_NAME" --ignore-not-found >/dev/null 2>&1
    start_ctl a "$ns" "$start" "$scale" "${MODEL_CTL_ARGS[@]}" ||
      { not_ok "controller starts"; return 1; }
  else
    port=$(free_port)
    holds_webhook_config "$port" "$ns" "${hcps[@]}" | k apply -f - >/dev/null ||
      { not_ok "webhook configuration"; return 1; }
    start_ctl a "$ns" "$start" "$scale" --webhook-bind-address "127.0.0.1:$port" \
      --webhook-cert-file "$CERT" --webhook-key-file "$KEY" "${MODEL_CTL_ARGS[@]}" ||
      { not_ok "controller starts"; return 1; }
  fi
  model_start "$ns" "$start" "$scale" "${CTL_T0[a]}" "$@" || { not_ok "model starts"; return 1; }
}

# model_np NS NAME CLUSTER REPLICAS [KEY=VALUE...]: a Replace NodePool at
# release REL0 with the stanza annotations (annotations_json); the model
# creates its MachineDeployment and machines, as HyperShift and Cluster API
# do.
model_np() {
  local ns=$1 name=$2 cluster=$3 replicas=$4
  shift 4
  api POST "$HS/namespaces/$ns/nodepools" "$(jq -nc --arg n "$name" --arg c "$cluster" \
    --arg img "$REL0" --argjson r "$replicas" --argjson a "$(annotations_json "$@")" '{
    apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
    metadata: {name: $n, annotations: $a},
    spec: {clusterName: $c, replicas: $r, management: {upgradeType: "Replace"},
           release: {image: $img}}}')" application/json >/dev/null
}

# model_machines OBJECT N: the model has created at least N machines of
# OBJECT ("ns/name" of the MachineDeployment).
model_machines() { [ "$(model_count machine-created "$1")" -ge "$2" ] 2>/dev/null; }

# request_release PATH IMAGE: a release written to a HostedCluster or
# NodePool (as OCM does); prints the object as admitted.
request_release() { api PATCH "$1" "{\"spec\": {\"release\": {\"image\": \"$2\"}}}"; }

# model_to EVENT OBJECT TO: the simulated times of the EVENTs about OBJECT
# whose "to" is TO (a release, a MachineSet), one a line.
model_to() {
  model_records | jq -r --arg e "$1" --arg o "$2" --arg to "$3" \
    'select(.event == $e and .object == $o and .to == $to) | .at'
}

# model_more EVENT OBJECT N: the model has recorded more than N EVENTs about
# OBJECT.
model_more() { [ "$(model_count "$1" "$2")" -gt "$3" ] 2>/dev/null; }

# model_nth EVENT OBJECT N: the simulated time of the N-th EVENT about
# OBJECT (1-based, in time order), or nothing.
model_nth() { model_times "$1" "$2" | sort | sed -n "${3}p"; }

# sim_between T LO HI: LO <= T < HI, T an RFC 3339 time (fractions allowed),
# LO and HI epoch seconds.
sim_between() {
  [ -n "$1" ] && awk -v t="$(date -u -d "$1" +%s.%N)" -v lo="$2" -v hi="$3" 'BEGIN { exit !(t >= lo && t < hi) }'
}

# starts_at NAME DESC RFC3339 TOL EVENT OBJECT [N0]: what HyperShift and
# Cluster API would have done at a window opening. The model records no new
# EVENT about OBJECT (beyond the N0 it had) before the instant on the
# controller NAME's clock, and the first within TOL real seconds (real_s)
# after it; checked as it happens (expect_at) and on the record's simulated time.
starts_at() {
  local name=$1 desc=$2 at=$3 tol ev=$5 obj=$6 n0=${7:-0} b t
  expect_at "$name" "$desc" "$at" "$4" model_more "$ev" "$obj" "$n0" || return 1
  tol=$(real_s "$4")
  b=$(epoch "$at")
  t=$(model_nth "$ev" "$obj" $((n0 + 1)))
  if sim_between "$t" "$b" "$(awk -v b="$b" -v k="${CTL_SCALE[$name]}" -v tol="$tol" 'BEGIN { printf "%.3f", b + tol * k }')"; then
    ok "$desc: the model recorded it at $t, not before $at"
  else
    not_ok "$desc: the model's record" "at '$t' (simulated), outside [$at, +$tol s real]"
  fi
}

# model_decided OBJECT: the machines real Cluster API decided to add to the
# MachineDeployment OBJECT's MachineSets (the machineset-scale-up steps,
# summed).
model_decided() {
  model_records | jq -s --arg o "$1" \
    '[.[] | select(.event == "machineset-scale-up" and .object == $o) | ((.to | tonumber) - (.from | tonumber))] | add // 0'
}

# none_after NAME DESC RFC3339 EVENT OBJECT: the model records no EVENT
# about OBJECT later than 1 s (real, on the controller NAME's clock) after
# the instant (a window closing: what was under way finishes, nothing new
# starts). Beside real Cluster API (E_CAPI=1) a replacement-start is its
# MachineSet controller carrying out a decision its MachineDeployment
# controller took earlier, by its own pace (over a second on a loaded
# machine), so the decision is what is checked: no machineset-scale-up. And
# a reconcile of the MachineDeployment under way when the pause landed
# still finishes (Cluster API checks the pause when a reconcile begins), so
# the decision may also come up to 2 s (real) after the pause was on the
# watch (deployment-paused); when the pause landed is checked apart (the
# scenario's expect_at), and a pause never seen leaves the 1 s.
none_after() {
  local name=$1 desc=$2 ev=$4 k=${CTL_SCALE[$1]} c b lo late p
  c=$(epoch "$3")
  b=$(awk -v c="$c" -v k="$k" 'BEGIN { printf "%.3f", c + k }')
  if [ "$ev" = replacement-start ] && [ "${E_CAPI:-}" = 1 ]; then
    ev=machineset-scale-up
    lo=$(awk -v c="$c" -v k="$k" 'BEGIN { printf "%.3f", c - k }')
    p=$(model_times deployment-paused "$5" | sort | while read -r t; do
      sim_between "$t" "$lo" 9999999999 && { echo "$t"; break; }
    done)
    if [ -n "$p" ]; then
      b=$(awk -v b="$b" -v p="$(date -u -d "$p" +%s.%N)" -v k="$k" 'BEGIN { x = p + 2 * k; printf "%.3f", (x > b ? x : b) }')
    fi
    desc="$desc: no MachineSet given a machine more (Cluster API's decision; the pause seen at ${p:-never})"
  fi
  late=$(model_times "$ev" "$5" | sort | while read -r t; do
    sim_between "$t" "$b" 9999999999 && echo "$t"
  done)
  check_eq "$desc" "" "$late"
}

# release_held DESC PATH IMAGE KEPT: a release written to a HostedCluster
# while restricted is admitted with spec.release.image kept at KEPT and the
# request recorded in the requested-release-image annotation.
release_held() {
  local out
  out=$(request_release "$2" "$3")
  check_eq "$1: spec.release.image stays" "$4" "$(jq -r .spec.release.image <<<"$out")"
  check_eq "$1: the request is recorded" "$3" \
    "$(jq -r --arg k "$CM/requested-release-image" '.metadata.annotations[$k] // ""' <<<"$out")"
}

# model_md_writes OBJECT: the model's writes of MachineDeployment OBJECT
# ("ns/name").
model_md_writes() { model_summary | jq -r --arg k "MachineDeployment $1" '.writes[$k] // 0'; }

# nodepool_held DESC NP-PATH MD-PATH: a NodePool release written while
# restricted is held at the NodePool: spec.release.image stays REL0, the
# request is recorded in the requested-nodepool-spec annotation, HyperShift
# (the model) writes no new MachineDeployment template (its version stays
# 4.17.0) and Cluster API starts no rollout.
nodepool_held() {
  local obj=${3#"$CAPI"/namespaces/} out
  obj=${obj/\/machinedeployments\//\/}
  out=$(request_release "$2" "$REL1")
  check_eq "$1: the NodePool's spec.release.image stays" "$REL0" "$(jq -r .spec.release.image <<<"$out")"
  check_eq "$1: the request is recorded on the NodePool" "$REL1" \
    "$(jq -r --arg k "$CM/requested-nodepool-spec" '.metadata.annotations[$k] // "{}" | fromjson | .release.image // ""' <<<"$out")"
  sleep 0.5 # HyperShift's reconcile of the NodePool event
  check_eq "$1: HyperShift's template stays (no new target)" 4.17.0 "$(md_version "$3")"
  check_eq "$1: no rollout (model record)" 0 "$(model_count replacement-start "$obj")"
}
