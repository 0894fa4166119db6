#!/usr/bin/env bash
# End-to-end test of the HyperShift / Cluster API behaviour model itself
# (e2e/model), against a real API server and without hcp-controller: each
# scenario writes what a person or HyperShift's user would write and checks
# what the model starts, from its record and from the objects.
#
# Needs a running instance with the main CRDs (MODEL_E2E_INSTANCE, default
# "main"; e2e/model/model.mk runs it in its own, "model", with Cluster API's
# own CRDs and webhooks: then capi_admission runs too) and the model binary
# (HCP_MODEL_BIN, default: built by e2e/model/build.sh). MODEL_E2E_ONLY="fn
# ..." runs only the named scenarios. Prints "N passed, N failed" last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CTL_E2E_INSTANCE=${MODEL_E2E_INSTANCE:-${CTL_E2E_INSTANCE:-main}}
# shellcheck source=e2e/controller/lib.sh
. "$here/../controller/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/lib.sh"
# No controller here: the fixture's HostedClusters keep the one history entry
# HyperShift writes at creation (lib.sh's MK_HC_COMPLETED adds none).
MK_HC_COMPLETED=""

SIM0=2026-03-06T12:00:00Z # the model's simulated clock starts here
SCALE=60                  # one real second is a simulated minute
REPLACE=2m                # one machine replacement: 2 real seconds
REL0=quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64
REL1=quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64
MDAPI=/apis/cluster.x-k8s.io/v1beta2
# On an instance with Cluster API's own CRDs and webhooks (the "model"
# instance: e2e/capi/lib.sh, capi_admission_only) its defaulting webhook
# prefixes the versions HyperShift writes ("4.17.1") with "v"; the fixture
# CRDs keep them as written. Set once the instance's environment is read.
CV=""

# ---- the model process ------------------------------------------------------------

records() { model_records; }
# sim_at US: the model's simulated time at real instant US (now_us), epoch seconds.
sim_at() { awk -v s="$(epoch "$SIM0")" -v t="$1" -v t0="$MODEL_T0" -v k="$SCALE" \
  'BEGIN { printf "%d", s + (t - t0) / 1e6 * k }'; }
# model_sim_now: the model's simulated time now, epoch seconds (upper bound).
model_sim_now() { awk -v s="$(epoch "$SIM0")" -v t="$(now_us)" -v t0="$MODEL_T0" -v k="$SCALE" \
  'BEGIN { printf "%d", s + (t - t0) / 1e6 * k + 1 }'; }

# ---- objects ------------------------------------------------------------------------

# mk_model_pool NS NAME CLUSTER TYPE REPLICAS: a NodePool (the model makes its
# MachineDeployment or MachineSet, as HyperShift does).
mk_model_pool() {
  api POST "$HS/namespaces/$1/nodepools" "$(jq -nc --arg n "$2" --arg c "$3" --arg t "$4" \
    --argjson r "$5" --arg img "$REL0" '{apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "NodePool", metadata: {name: $n},
      spec: {clusterName: $c, replicas: $r, management: {upgradeType: $t}, release: {image: $img}}}')" \
    application/json >/dev/null
}
np_set() { api PATCH "$(np_path "$1" "$2")" "{\"spec\": $3}" >/dev/null; }          # NS NP SPEC-JSON
hc_set() { api PATCH "$(hc_path "$1" "$2")" "{\"spec\": $3}" >/dev/null; }          # NS HC SPEC-JSON
md_get() { get "$MDAPI/namespaces/$1-$2/machinedeployments/$3" "$4"; }             # NS HC NP JQ
ms_get() { get "$MDAPI/namespaces/$1-$2/machinesets/$3" "$4"; }                    # NS HC MS JQ
# model_machine_list NS HC JQ-FILTER-ON-ITEMS: the model's machines of a control-plane namespace.
model_machine_list() {
  api GET "/api/v1/namespaces/$1-$2/configmaps?labelSelector=e2e-model.hcp-controller/role%3Dmachine" |
    jq -r "[.items[] | select(.metadata.deletionTimestamp == null)] | $3"
}
hcp_running() { get "/api/v1/namespaces/$1-$2/configmaps/$2" .data.runningImage; }
cluster_spec_paused() { get "$(cluster_path "$1" "$2")" '.spec.paused // false'; }

# ---- scenarios ----------------------------------------------------------------------

# Fact 1: a HostedCluster release bump starts the control-plane update at
# once, whatever the CAPI Cluster's pause annotation says, and an unpaused
# HostedCluster keeps Cluster.spec.paused false.
hc_release_bump() {
  must mk_hc "$NS" hc1 || return
  eventually "the HostedControlPlane stand-in runs the HostedCluster's release" "$REL0" hcp_running "$NS" hc1
  now_is "no initiation for the release it was created with" 0 model_count controlplane-initiation "$NS/hc1"
  must api PATCH "$(cluster_path "$NS" hc1)" "{\"metadata\": {\"annotations\": {\"$PAUSED_ANN\": \"true\"}}}" || return
  local t0 at
  t0=$(model_sim_now)
  must hc_set "$NS" hc1 "{\"release\": {\"image\": \"$REL1\"}}" || return
  EVENTUALLY=3 eventually "the bump is initiated despite the Cluster's pause annotation" 1 \
    model_count controlplane-initiation "$NS/hc1"
  now_is "the HostedControlPlane stand-in runs the new release" "$REL1" hcp_running "$NS" hc1
  at=$(model_times controlplane-initiation "$NS/hc1" | head -1)
  [ -n "$at" ] || at=1970-01-01T00:00:00Z
  in_range "initiated within 3 simulated minutes of the bump (at $at)" "$(($(epoch "$at") - t0))" -60 180
  # --hc-status: status.version as HyperShift writes it, Partial for the
  # control plane's update duration (5 simulated minutes), then Completed.
  eventually "status.version.desired is the new release" "$REL1" get "$(hc_path "$NS" hc1)" .status.version.desired.image
  now_is "history[0] is Partial for it" "Partial $REL1 2" \
    get "$(hc_path "$NS" hc1)" '.status.version.history | "\(.[0].state) \(.[0].image) \(length)"'
  EVENTUALLY=10 eventually "history[0] is Completed after the update's duration" Completed \
    get "$(hc_path "$NS" hc1)" '.status.version.history[0].state'
  local done
  done=$(get "$(hc_path "$NS" hc1)" '.status.version.history[0] | "\(.startedTime) \(.completionTime)"')
  in_range "it took the update's 5 simulated minutes ($done)" \
    "$(($(epoch "${done#* }") - $(epoch "${done%% *}")))" 300 330
  must api PATCH "$(cluster_path "$NS" hc1)" '{"spec": {"paused": true}}' || return
  eventually "a hand-set Cluster.spec.paused is set back to false" false cluster_spec_paused "$NS" hc1
}

# A NodePool release bump on a Replace pool: the MachineDeployment template
# changes, a new MachineSet appears, and machines are replaced one at a time.
np_replace_rollout() {
  must mk_hc "$NS" hc2 || return
  must mk_model_pool "$NS" rp hc2 Replace 3 || return
  EVENTUALLY=10 eventually "the MachineDeployment gets the pool's 3 replicas" 3 md_get "$NS" hc2 rp .spec.replicas
  EVENTUALLY=10 eventually "3 machines run" 3 model_machine_list "$NS" hc2 '[.[] | select(.data.state == "Running")] | length'
  now_is "the MachineDeployment template has the release's version" "${CV}4.17.0" md_get "$NS" hc2 rp .spec.template.spec.version
  now_is "one MachineSet so far" 1 model_count machineset-created "$NS-hc2/rp"
  must np_set "$NS" rp "{\"release\": {\"image\": \"$REL1\"}}" || return
  eventually "the MachineDeployment template moves to 4.17.1" "${CV}4.17.1" md_get "$NS" hc2 rp .spec.template.spec.version
  eventually "a new MachineSet is created for it" 2 model_count machineset-created "$NS-hc2/rp"
  EVENTUALLY=20 eventually "3 replacements done" 3 model_count replacement-done "$NS-hc2/rp"
  now_is "3 replacements started" 3 model_count replacement-start "$NS-hc2/rp"
  now_is "all 3 machines run 4.17.1" 3 model_machine_list "$NS" hc2 '[.[] | select(.data.version == "'"${CV}"'4.17.1" and .data.state == "Running")] | length'
  # One at a time: starts and ends alternate, and each start waits for the
  # previous replacement (2 simulated minutes).
  local seq gaps
  seq=$(records | jq -rs --arg o "$NS-hc2/rp" '[.[] | select(.object == $o and (.event | startswith("replacement-"))) | .event | ltrimstr("replacement-")] | join(",")')
  check_eq "replacements run one at a time" "start,done,start,done,start,done" "$seq"
  gaps=$(records | jq -rs --arg o "$NS-hc2/rp" '[.[] | select(.object == $o and .event == "replacement-start") | .at | sub("\\.[0-9]+Z$"; "Z") | fromdate] | [range(1; length) as $i | .[$i] - .[$i-1]] | min')
  in_range "starts at least one replacement duration apart (min gap ${gaps}s)" "$gaps" 119 100000
  now_is "the MachineDeployment status counts 3 up to date" 3 md_get "$NS" hc2 rp .status.upToDateReplicas
}

# Fact 2: a pause annotation put on the MachineDeployment is deleted by the
# next NodePool reconcile, which any MachineDeployment event triggers.
md_pause_deleted() {
  must mk_hc "$NS" hc3 || return
  must mk_model_pool "$NS" pp hc3 Replace 1 || return
  EVENTUALLY=10 eventually "the MachineDeployment exists" 1 md_get "$NS" hc3 pp .spec.replicas
  must api PATCH "$MDAPI/namespaces/$NS-hc3/machinedeployments/pp" \
    "{\"metadata\": {\"annotations\": {\"$PAUSED_ANN\": \"true\"}}}" || return
  eventually "the model's HyperShift deletes the pause annotation" "" \
    md_get "$NS" hc3 pp ".metadata.annotations[\"$PAUSED_ANN\"] // \"\""
  # ... and a release bump rolls out as if it had never been there.
  must np_set "$NS" pp "{\"release\": {\"image\": \"$REL1\"}}" || return
  EVENTUALLY=10 eventually "the bump is replaced after all" 1 model_count replacement-done "$NS-hc3/pp"
}

# Fact 5: MachineDeployment.spec.paused (which HyperShift never writes)
# stops the rollout (no new MachineSet) but not scaling.
md_spec_paused() {
  must mk_hc "$NS" hc4 || return
  must mk_model_pool "$NS" sp hc4 Replace 2 || return
  EVENTUALLY=10 eventually "2 machines run" 2 model_machine_list "$NS" hc4 'length'
  must api PATCH "$MDAPI/namespaces/$NS-hc4/machinedeployments/sp" '{"spec": {"paused": true}}' || return
  must np_set "$NS" sp "{\"release\": {\"image\": \"$REL1\"}}" || return
  eventually "the template moves to 4.17.1" "${CV}4.17.1" md_get "$NS" hc4 sp .spec.template.spec.version
  must np_set "$NS" sp '{"replicas": 3}' || return
  EVENTUALLY=10 eventually "a paused MachineDeployment still scales to 3" 3 model_machine_list "$NS" hc4 'length'
  sleep 3 # 3 simulated minutes, more than a replacement takes
  now_is "no MachineSet for the new template while paused" 1 model_count machineset-created "$NS-hc4/sp"
  now_is "no replacement while paused" 0 model_count replacement-start "$NS-hc4/sp"
  must api PATCH "$MDAPI/namespaces/$NS-hc4/machinedeployments/sp" '{"spec": {"paused": false}}' || return
  eventually "unpaused, the new MachineSet comes" 2 model_count machineset-created "$NS-hc4/sp"
  eventually "and the replacements start" 1 model_count replacement-start "$NS-hc4/sp"
}

# HyperShift's credentials per target (nodepool/token.go) and NodePool
# status (capi.go). A pool runs 4.17.0: its user data and token exist, the
# token has no expiry, status.version is 4.17.0. Its MachineDeployment is
# stopped (spec.paused) and the pool asked for 4.17.1: HyperShift writes the
# new template, expires the old token (--token-ttl 3m here) and deletes the
# old user data at once; status.version stays 4.17.0 (the rollout is not
# complete). A scale-up then makes a machine from the old MachineSet, whose
# user data is gone: it never becomes a node (bootstrap-failed). Once the
# TTL has passed the old token is deleted.
np_tokens() {
  local cp=$NS-hc8 ud0 tok0
  must mk_hc "$NS" hc8 || return
  must mk_model_pool "$NS" tk hc8 Replace 2 || return
  EVENTUALLY=10 eventually "2 machines run" 2 model_machine_list "$NS" hc8 '[.[] | select(.data.state == "Running")] | length'
  EVENTUALLY=10 eventually "NodePool status.version (HyperShift's status sync)" 4.17.0 get "$(np_path "$NS" tk)" .status.version
  eventually "NodePool status.replicas" 2 get "$(np_path "$NS" tk)" .status.replicas
  ud0=$(md_get "$NS" hc8 tk .spec.template.spec.bootstrap.dataSecretName)
  now_is "the current-config annotation names the running target" "$ud0" \
    eval 'echo user-data-tk-$(get "$(np_path "$NS" tk)" ".metadata.annotations[\"hypershift.openshift.io/nodePoolCurrentConfigVersion\"]")'
  tok0=$(get "/api/v1/namespaces/$cp/configmaps/$ud0" .data.token)
  check "the running user data carries a token" test -n "$tok0"
  now_is "its token Secret has no expiry" "-" get "/api/v1/namespaces/$cp/configmaps/token-${ud0#user-data-}" \
    '.metadata.annotations["hypershift.openshift.io/ignition-token-expiration-timestamp"] // "-"'
  must api PATCH "$MDAPI/namespaces/$cp/machinedeployments/tk" '{"spec": {"paused": true}}' || return
  must np_set "$NS" tk "{\"release\": {\"image\": \"$REL1\"}}" || return
  eventually "the template moves to 4.17.1" "${CV}4.17.1" md_get "$NS" hc8 tk .spec.template.spec.version
  eventually "the old user-data Secret is deleted" NotFound get "/api/v1/namespaces/$cp/configmaps/$ud0" .reason
  now_is "the old token gets an expiry" 1 model_count token-expiry-set "$cp/token-${ud0#user-data-}"
  now_is "HyperShift returned before the status sync when it wrote the template" 1 \
    eval "[ \$(model_count nodepool-status-skipped $NS/tk) -ge 1 ] && echo 1"
  now_is "status.version stays 4.17.0 (the rollout is not complete)" 4.17.0 get "$(np_path "$NS" tk)" .status.version
  must np_set "$NS" tk '{"replicas": 3}' || return
  EVENTUALLY=10 eventually "a scale-up's machine from the old template fails to bootstrap" 1 model_count bootstrap-failed "$cp/tk"
  now_is "it never becomes a node" 2 model_machine_list "$NS" hc8 '[.[] | select(.data.state == "Running")] | length'
  check_contains "the record says why" "missing user-data Secret $ud0" \
    "$(records | jq -r --arg o "$cp/tk" 'select(.event == "bootstrap-failed" and .object == $o) | .detail')"
  EVENTUALLY=10 eventually "the expired token is deleted after the TTL" 1 model_count token-deleted "$cp/token-${ud0#user-data-}"
}

# NodePool scale 3 -> 5 reaches the MachineDeployment and the machines; a
# machine deleted by remediation is replaced.
np_scale_and_remediation() {
  must mk_hc "$NS" hc5 || return
  must mk_model_pool "$NS" sc hc5 Replace 3 || return
  EVENTUALLY=10 eventually "3 machines run" 3 model_machine_list "$NS" hc5 'length'
  must np_set "$NS" sc '{"replicas": 5}' || return
  eventually "the MachineDeployment gets 5 replicas" 5 md_get "$NS" hc5 sc .spec.replicas
  eventually "5 machines" 5 model_machine_list "$NS" hc5 'length'
  eventually "the scale is recorded 3 -> 5" "3->5" \
    bash -c "curl -sf http://127.0.0.1:$MODEL_PORT/records | jq -rs '[.[] | select(.event == \"scale\" and .object == \"$NS-hc5/sc\")][0] | \"\(.from)->\(.to)\"'"
  now_is "2 machines created by the scale-up (after the first 3)" 5 model_count machine-created "$NS-hc5/sc"
  now_is "the MachineDeployment status says 5" 5 md_get "$NS" hc5 sc .status.replicas
  local victim
  victim=$(model_machine_list "$NS" hc5 '.[0].metadata.name')
  must k delete configmap -n "$NS-hc5" "$victim" || return
  eventually "a machine deleted by remediation is replaced" 1 model_count remediation-replacement "$NS-hc5/sc"
  eventually "5 machines again" 5 model_machine_list "$NS" hc5 'length'
  now_is "no scale recorded for it" 1 bash -c "curl -sf http://127.0.0.1:$MODEL_PORT/records | jq -s '[.[] | select(.event == \"scale\" and .object == \"$NS-hc5/sc\")] | length'"
}

# Facts 3 and 4 (HostedCluster side): an InPlace pool gets the MachineSet
# target annotation, and the in-place update runs although the Cluster is
# paused (the HostedCluster's pausedUntil pauses it).
np_inplace() {
  must mk_hc "$NS" hc6 || return
  must mk_model_pool "$NS" ip hc6 InPlace 2 || return
  EVENTUALLY=10 eventually "2 machines run" 2 model_machine_list "$NS" hc6 'length'
  local t0 t1
  t0=$(ms_get "$NS" hc6 ip ".metadata.annotations[\"hypershift.openshift.io/nodePoolTargetConfigVersion\"]")
  check "the MachineSet has a target config version" test -n "$t0"
  must hc_set "$NS" hc6 '{"pausedUntil": "true"}' || return
  eventually "the HostedCluster's pausedUntil pauses the CAPI Cluster" true cluster_spec_paused "$NS" hc6
  must np_set "$NS" ip "{\"release\": {\"image\": \"$REL1\"}}" || return
  eventually "the target annotation changes" 1 model_count inplace-target-set "$NS-hc6/ip"
  t1=$(ms_get "$NS" hc6 ip ".metadata.annotations[\"hypershift.openshift.io/nodePoolTargetConfigVersion\"]")
  check "to another config version" test "$t1" != "$t0" -a -n "$t1"
  eventually "an in-place update starts despite Cluster.spec.paused" 1 model_count inplace-update-start "$NS-hc6/ip"
  EVENTUALLY=10 eventually "both machines updated, one at a time" "start,done,start,done" \
    bash -c "curl -sf http://127.0.0.1:$MODEL_PORT/records | jq -rs '[.[] | select(.object == \"$NS-hc6/ip\" and (.event | startswith(\"inplace-update\"))) | .event | ltrimstr(\"inplace-update-\")] | join(\",\")'"
  eventually "the current config version reaches the target" "$t1" \
    ms_get "$NS" hc6 ip ".metadata.annotations[\"hypershift.openshift.io/nodePoolCurrentConfigVersion\"]"
}

# Fact 4: pausedUntil in the future stops the reconcile of that object
# (HostedCluster: no initiation; NodePool: no template change, and its
# MachineDeployment is paused), until the instant passes on the simulated
# clock; Cluster.spec.paused stops Cluster API (no scaling).
paused_until() {
  must mk_hc "$NS" hc7 || return
  must mk_model_pool "$NS" pu hc7 Replace 2 || return
  EVENTUALLY=10 eventually "2 machines run" 2 model_machine_list "$NS" hc7 'length'
  local until
  until=$(rfc3339 $(($(model_sim_now) + 240))) # 4 simulated minutes ahead
  must np_set "$NS" pu "{\"pausedUntil\": \"$until\"}" || return
  eventually "the NodePool's pause puts the pause annotation on its MachineDeployment" true \
    md_get "$NS" hc7 pu ".metadata.annotations[\"$PAUSED_ANN\"] // \"\""
  must np_set "$NS" pu "{\"release\": {\"image\": \"$REL1\"}}" || return
  sleep 1
  now_is "the paused NodePool's template does not change" "${CV}4.17.0" md_get "$NS" hc7 pu .spec.template.spec.version
  EVENTUALLY=8 eventually "after pausedUntil the template changes" "${CV}4.17.1" md_get "$NS" hc7 pu .spec.template.spec.version
  # The model makes the rollout's MachineSet after the template changes: wait
  # for it, or the first MachineSet (the pool's creation) would be read.
  eventually "the rollout's MachineSet is made (the pool's second)" 2 model_count machineset-created "$NS-hc7/pu"
  local at
  at=$(records | jq -rs --arg o "$NS-hc7/pu" '[.[] | select(.event == "machineset-created" and .object == $o)] | .[-1].at | sub("\\.[0-9]+Z$"; "Z")')
  in_range "its rollout starts after $until (at $at)" "$(epoch "$at")" "$(epoch "$until")" "$(($(epoch "$until") + 120))"

  # The HostedCluster: paused indefinitely, nothing is initiated, and the
  # Cluster stops Cluster API: a scale does not reach the machines.
  EVENTUALLY=10 eventually "the NodePool's rollout has finished" 2 model_count replacement-done "$NS-hc7/pu"
  eventually "2 machines, both 4.17.1" 2 model_machine_list "$NS" hc7 '[.[] | select(.data.version == "'"${CV}"'4.17.1")] | length'
  now_is "and no other" 2 model_machine_list "$NS" hc7 'length'
  must hc_set "$NS" hc7 '{"pausedUntil": "true"}' || return
  eventually "the Cluster gets spec.paused" true cluster_spec_paused "$NS" hc7
  must hc_set "$NS" hc7 "{\"release\": {\"image\": \"$REL1\"}}" || return
  must np_set "$NS" pu '{"replicas": 4}' || return
  eventually "the MachineDeployment gets 4 replicas (HyperShift's NodePool part runs)" 4 md_get "$NS" hc7 pu .spec.replicas
  sleep 2
  now_is "no initiation while the HostedCluster is paused" 0 model_count controlplane-initiation "$NS/hc7"
  now_is "the paused Cluster's machines do not scale" 2 model_machine_list "$NS" hc7 'length'
  must hc_set "$NS" hc7 '{"pausedUntil": null}' || return
  eventually "unpaused: the initiation" 1 model_count controlplane-initiation "$NS/hc7"
  eventually "unpaused: the Cluster runs again" false cluster_spec_paused "$NS" hc7
  eventually "unpaused: 4 machines" 4 model_machine_list "$NS" hc7 'length'
}

# Cluster API's own CRDs and webhooks, on the "model" instance only
# (E_CAPI_ADMISSION): what the model writes as HyperShift and as Cluster
# API was admitted, defaulted and converted by Cluster API's core manager,
# whose controllers act on nothing (--watch-filter): the model alone plays
# them.
capi_admission() {
  local v1=/apis/cluster.x-k8s.io/v1beta1/namespaces/$NS-hc2 out
  check_eq "the webhook defaulted the MachineDeployment's selector to its cluster" true \
    "$(md_get "$NS" hc2 rp '.kind == "MachineDeployment" and .spec.clusterName != "" and
      .spec.selector.matchLabels["cluster.x-k8s.io/cluster-name"] == .spec.clusterName')"
  # The conversion: v1beta1 readers (HyperShift) get v1beta1's layout.
  check_eq "a v1beta1 read gets status.updatedReplicas (converted from status.deprecated.v1beta1)" 3 \
    "$(get "$v1/machinedeployments/rp" .status.updatedReplicas)"
  check_eq "and spec.strategy (converted from spec.rollout.strategy)" 1 \
    "$(get "$v1/machinedeployments/rp" .spec.strategy.rollingUpdate.maxSurge)"
  # Validation: a template version that is not semantic is refused, with
  # the field named.
  out=$(api POST "$v1/machinedeployments" "$(jq -nc '{apiVersion: "cluster.x-k8s.io/v1beta1",
    kind: "MachineDeployment", metadata: {name: "bad-version"},
    spec: {clusterName: "c", selector: {matchLabels: {a: "b"}},
      template: {metadata: {labels: {a: "b"}}, spec: {clusterName: "c", version: "4.17.x",
        bootstrap: {dataSecretName: "u"},
        infrastructureRef: {apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2", kind: "AWSMachineTemplate", name: "t"}}}}}')" \
    application/json)
  check "Cluster API's webhook refuses a MachineDeployment version '4.17.x', naming spec.template.spec.version" \
    grep -q 'spec.template.spec.version' <<<"$out"
  # No Cluster API controller acted: none put its finalizer on anything.
  check_eq "no Cluster API controller acted (no finalizer on the model's Clusters, MachineDeployments, MachineSets)" 0 \
    "$(for r in clusters machinedeployments machinesets; do
      api GET "$MDAPI/$r" | jq --arg ns "$NS-" '[.items[] | select(.metadata.namespace | startswith($ns)) | .metadata.finalizers // [] | length] | add // 0'
    done | awk '{ s += $1 } END { print s + 0 }')"
}

# The record and the summary: the file has what /records serves, writes are
# counted per object, and SIGTERM ends the model cleanly with a summary. The
# model still runs while /records is read (hc7's machines may still record),
# so what it served must be the file's beginning; once it has stopped, the
# file and the final summary must count the same records.
record_and_exit() {
  local served=$CTL_TMP/records.served n
  records | jq -c . >"$served"
  n=$(wc -l <"$served")
  check "/records serves records ($n)" test "$n" -gt 0
  check_eq "the record file begins with every record /records served" "" \
    "$(head -n "$n" "$MODEL_REC" | jq -c . | cmp - "$served" 2>&1)"
  check "the summary counts writes to the MachineDeployment of rp" test \
    "$(curl -sf "http://127.0.0.1:$MODEL_PORT/summary" | jq --arg k "MachineDeployment $NS-hc2/rp" '.writes[$k] // 0')" -gt 0
  model_stop
  check_eq "SIGTERM: the model exits 0" 0 "$MODEL_RC"
  check_eq "the final summary counts every record in the file" "$(wc -l <"$MODEL_REC")" \
    "$(jq '[.events[]] | add' "$MODEL_OUT" 2>/dev/null)"
}

# The clock: --clock-anchor puts the simulated start at a given real instant
# (to share a controller's clock), and the summary reports that clock.
clock_anchor() {
  local pf=$CTL_TMP/anchor.port pid port now
  "$MODEL_BIN" --kubeconfig "$KCFG" --namespace "$NS-none" --simulated-start-time "$SIM0" \
    --time-scale 2 --clock-anchor "$(($(date +%s) - 100))" --port-file "$pf" \
    >/dev/null 2>"$CTL_TMP/anchor.log" &
  pid=$!
  if wait_for 30 test -s "$pf"; then
    port=$(cat "$pf")
    now=$(curl -sf "http://127.0.0.1:$port/summary" | jq -r '.now | sub("\\.[0-9]+Z$"; "Z")')
    # 100 real seconds before now at scale 2: 200 simulated seconds in.
    in_range "a clock anchored 100 s ago at scale 2 reads START+200s (reads $now)" \
      "$(($(epoch "$now") - $(epoch "$SIM0")))" 199 205
  else
    not_ok "the anchored model starts" "$(tail -3 "$CTL_TMP/anchor.log")"
  fi
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  check_eq "it exits 0 on SIGTERM" 0 "$?"
  # The model's clock read between two readings of the test's (same anchor).
  local lo hi got
  lo=$(sim_at "$(now_us)")
  got=$(epoch "$(model_summary | jq -r '.now | sub("\\.[0-9]+Z$"; "Z")')")
  hi=$(sim_at "$(now_us)")
  in_range "the summary's clock is the test's" "$got" $((lo - 1)) $((hi + 1))
}

# ---- main -----------------------------------------------------------------------------

trap 'model_stop; cleanup_all' EXIT
trap 'exit 130' INT TERM
if ! load_cluster_env; then
  echo "instance $CTL_E2E_INSTANCE not running (e2e/cluster.sh up $CTL_E2E_INSTANCE)"
  echo "0 passed, 1 failed"
  exit 1
fi
if [ ! -x "$MODEL_BIN" ]; then
  echo "no model binary at $MODEL_BIN (e2e/model/build.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
ADMISSION=""
if [ "${E_CAPI_ADMISSION:-}" = 1 ]; then
  CV=v ADMISSION=capi_admission
fi
NS=$(new_ns model) || { echo "0 passed, 1 failed"; exit 1; }
if ! model_start "$NS" "$SIM0" "$SCALE" "" --replacement-duration "$REPLACE" \
  --hc-status --controlplane-update-duration 5m --token-ttl 3m; then
  not_ok "the model starts"
  summary
  exit 1
fi
for fn in clock_anchor hc_release_bump np_replace_rollout md_pause_deleted md_spec_paused np_tokens \
  np_scale_and_remediation np_inplace paused_until $ADMISSION record_and_exit; do
  if [ -n "${MODEL_E2E_ONLY:-}" ] && [[ " $MODEL_E2E_ONLY " != *" $fn "* ]]; then continue; fi
  SCENARIO=$fn
  echo "# ---- $fn"
  f0=$failed
  "$fn"
  if [ "$failed" -gt "$f0" ] && [ -f "$MODEL_LOG" ]; then
    echo "# model log:"
    tail -15 "$MODEL_LOG" | sed 's/^/#   /'
  fi
  SCENARIO=""
done
summary
