#!/usr/bin/env bash
# End-to-end: a NodePool release change held at the NodePool, beside
# HyperShift's OWN NodePool reconciler (HyperShift v0.1.70, imported
# unmodified by e2e/hypershift/main.go, with the release and image fakes
# HyperShift's own tests use). Two instances run it:
#   - "hypershift" serves HyperShift's own HostedCluster and NodePool CRDs;
#     the test plays Cluster API: the MachineDeployment's status when a
#     rollout or a scale is done;
#   - "capi-hypershift" (CTL_E2E_INSTANCE) adds real Cluster API (its own
#     CRDs, core manager and webhooks: e2e/capi), which turns HyperShift's
#     MachineDeployment into MachineSets, Machines and AWSMachines; the test
#     plays HyperShift's Cluster, AWSCluster and HostedControlPlane, the AWS
#     provider and the kubelets (the block "beside real Cluster API" below).
# Either way the test also plays what other HyperShift controllers provide:
# the HostedCluster's status (ignition endpoint, kubeconfig, payload
# architecture, completed releases), the ignition server's CA Secret and the
# core ignition ConfigMaps.
#
# A Replace pool of 2 on AWS, restricted on a Friday night (the window opens
# Saturday 01:00 for 2 h 30 min), running 4.18.0 on a control plane at 4.18.2:
#   - HyperShift writes its token and user-data Secrets, an AWSMachineTemplate
#     and the MachineDeployment, and reports 4.18.0 once the rollout is done
#     (real Cluster API: 2 Machines Running in one MachineSet);
#   - 4.18.2 is asked for by a GitOps tool's server-side apply and
#     reverted by the next one (DESIGN.md 3.13): the request is withdrawn
#     (the record gone, a ChangeWithdrawn Event) and HyperShift, which never
#     saw it, writes nothing for it, then or at the window;
#   - 4.18.1 is asked for: the controller holds it at the NodePool (the
#     request is recorded, spec.release stays), so HyperShift writes nothing
#     new: no token, no user data, no template, the MachineDeployment and the
#     running token's expiry untouched, and it reports no update
#     (UpdatingVersion not True); its own conditions and the controller's
#     ChangesPending live side by side in the NodePool's status; Cluster API
#     makes no MachineSet and replaces no machine;
#   - still held, the pool is scaled to 3: the scale goes through and
#     HyperShift scales the MachineDeployment on the same user data (Cluster
#     API: a third machine in the same MachineSet), the change still held;
#   - real Cluster API only, still held: a Node goes NotReady and the
#     MachineHealthCheck HyperShift writes for autoRepair has Cluster API
#     replace its machine from the running template, whose user data and
#     token the hold kept valid, so the replacement joins;
#   - the window opens: the controller applies the request and HyperShift
#     does what it does for a new release: a new token and user data, a new
#     template, the MachineDeployment pointed at them, an expiry on the old
#     token; once the rollout is done it reports 4.18.1 (Cluster API: 3 new
#     machines in a new MachineSet, the old machines' Nodes drained and
#     deleted);
#   - real Cluster API only: 4.18.2 is asked for 8 s before the window
#     closes, so the close finds its rollout under way: the controller pauses
#     the MachineDeployment, the pause holds through HyperShift's reconciles,
#     no replacement starts after the close, HyperShift reports the update in
#     progress.
#   - while 4.18.1 is held: the admission calls per HyperShift reconcile
#     with the chart's webhook configuration of this release and of the one
#     before (its matchConditions), figures.
# HyperShift's reconciler runs as HyperShift's ServiceAccount (the default
# of --hypershift-users), impersonated.
# NP_HOLD=0 leaves /hold/nodepools out of the webhook configuration (the hold
# broken): the held checks then fail. MD_HOLD=0 leaves /hold/machinedeployments
# out: HyperShift's reconciles then delete the pause's annotation at the close
# and Cluster API, held by spec.paused alone, adds a machine after it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CTL_E2E_INSTANCE=${CTL_E2E_INSTANCE:-hypershift}
# shellcheck source=e2e/controller/lib.sh
. "$here/../controller/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

HS_BIN=${HCP_HYPERSHIFT_BIN:-$("$here/build.sh" --path)/hcp-hypershift}
SIM0=2026-03-06T22:30:00Z # Friday 22:30
# HS_SCENARIO=drift (e2e/hypershift/test_drift.sh): after the pool is up,
# only the drift scenario below runs, with 1 h 45 min more (52.5 s real)
# before the window: the scenario reaches the window's eve about 50 s after
# the controller starts on an idle machine (it prints how long is left),
# and needs the rest on a loaded one (75 s were left at load 6).
HS_SCENARIO=${HS_SCENARIO:-holds}
[ "$HS_SCENARIO" = drift ] && SIM0=2026-03-06T20:45:00Z
# The pool's replicas: 3 in the drift scenario (scaled to 5 during the hold).
N0=2
[ "$HS_SCENARIO" = drift ] && N0=3
# HS_TOKEN_TTL: the real seconds an outdated ignition token stays valid
# (HyperShift: 2 h, nodepool/token.go setExpirationTimestampOnToken); the
# stand-in ignition server below removes a token that long after HyperShift
# marked it. The drift scenario's hold lasts longer than its 10 s.
HS_TOKEN_TTL=${HS_TOKEN_TTL:-7200}
[ "$HS_SCENARIO" = drift ] && [ "$HS_TOKEN_TTL" = 7200 ] && HS_TOKEN_TTL=10
# Beside real Cluster API on a loaded machine (3 lanes and the sanitizer
# suites on 2 cores) the sections before the window took more than 75 s
# (the window opened during the admission-calls section): 1 h 15 min more
# (37.5 s real) there; the window section waits for the rest.
[ "$HS_SCENARIO" = holds ] && [ "${E_CAPI:-0}" = 1 ] && SIM0=2026-03-06T21:15:00Z
OPEN=2026-03-07T01:00:00Z  # Saturday's window, 2 h 30 min
CLOSE=2026-03-07T03:30:00Z # (75 s real)
SCALE=120                  # 75 s real to the window
R0=quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64
R1=quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64
R2=quay.io/openshift-release-dev/ocp-release:4.18.2-x86_64
WH_NAME=hcp-e2e-hypershift-$$
REQ=changemanagement.hypershift.openshift.io/requested-nodepool-spec
POLICY_ANN=changemanagement.hypershift.openshift.io/policy
EXPIRY=hypershift.openshift.io/ignition-token-expiration-timestamp
CAPI_AWS=/apis/infrastructure.cluster.x-k8s.io/v1beta2

webhook_scenario_begin
[ -x "$HS_BIN" ] || { not_ok "HyperShift's reconciler is built" "no $HS_BIN (make e2e-hypershift-bin)"; summary; exit 1; }
HS_PID=""
hs_stop() { [ -n "$HS_PID" ] && kill -TERM "$HS_PID" 2>/dev/null && wait "$HS_PID" 2>/dev/null; HS_PID=""; }
NODES="" AWS_PID="" IGN_PID="" # beside real Cluster API: the Nodes the test's kubelets registered, its AWS provider, its ignition server
nodes_cleanup() {
  [ -n "$AWS_PID" ] && kill "$AWS_PID" 2>/dev/null && wait "$AWS_PID" 2>/dev/null
  [ -n "$IGN_PID" ] && kill "$IGN_PID" 2>/dev/null && wait "$IGN_PID" 2>/dev/null
  AWS_PID="" IGN_PID=""
  local n
  if [ -n "$NODES" ] && [ -s "$NODES" ]; then
    for n in $(sort -u "$NODES"); do api DELETE "/api/v1/nodes/$n" >/dev/null 2>&1; done
  fi
  return 0
}
trap 'hs_stop; nodes_cleanup; webhook_scenario_cleanup' EXIT

NS=$(new_ns hs)
CP=$NS-a # HyperShift's control-plane namespace: <namespace>-<name>
k create namespace "$CP" >/dev/null && echo "$CP" >>"$CTL_NSFILE"
NP=$(np_path "$NS" np)
MD=$CAPI/namespaces/$CP/machinedeployments/np
SECRETS=/api/v1/namespaces/$CP/secrets

# ---- what other HyperShift controllers and the test provide ----------------------

post() { api POST "$1" "$2" application/json >/dev/null || not_ok "$3"; }
post "/api/v1/namespaces/$NS/secrets" "$(jq -nc '{apiVersion: "v1", kind: "Secret",
  metadata: {name: "pull-secret"}, type: "kubernetes.io/dockerconfigjson",
  data: {".dockerconfigjson": ("{\"auths\":{\"quay.io\":{\"auth\":\"ZmFrZTpmYWtl\"}}}" | @base64)}}')" "pull secret"
post "/api/v1/namespaces/$NS/secrets" "$(jq -nc '{apiVersion: "v1", kind: "Secret",
  metadata: {name: "a-admin-kubeconfig"}, data: {kubeconfig: ("apiVersion: v1\nkind: Config\n" | @base64)}}')" "admin kubeconfig Secret"
# The ignition server's CA (the control-plane operator's; any certificate).
post "$SECRETS" "$(jq -nc --arg c "$(base64 -w0 "$CERT")" '{apiVersion: "v1", kind: "Secret",
  metadata: {name: "ignition-server-ca-cert"}, data: {"tls.crt": $c}}')" "ignition server CA Secret"
# The control-plane operator's three core ignition ConfigMaps.
for i in 1 2 3; do
  post "/api/v1/namespaces/$CP/configmaps" "$(jq -nc --arg i "$i" '{apiVersion: "v1", kind: "ConfigMap",
    metadata: {name: ("core-ignition-" + $i), labels: {"hypershift.openshift.io/core-ignition-config": "true"}},
    data: {config: ("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-worker-e2e-" + $i + "\n  labels:\n    machineconfiguration.openshift.io/role: worker\nspec:\n  config:\n    ignition:\n      version: 3.2.0\n")}}')" "core ignition ConfigMap $i"
done

mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 2h30m)" || not_ok "policy"
# The HostedCluster as HyperShift's CRD wants it, its control plane at 4.18.2.
post "$HS/namespaces/$NS/hostedclusters" "$(jq -nc --arg r "$R2" --arg p "$POLICY_ANN" '{
  apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedCluster",
  metadata: {name: "a", annotations: {($p): "weekend"}},
  spec: {release: {image: $r}, pullSecret: {name: "pull-secret"}, infraID: "a-e2e",
    platform: {type: "AWS", aws: {region: "us-east-1", rolesRef: ([
      "ingressARN", "imageRegistryARN", "storageARN", "networkARN", "kubeCloudControllerARN",
      "nodePoolManagementARN", "controlPlaneOperatorARN"]
      | map({(.): ("arn:aws:iam::123456789012:role/e2e-" + .)}) | add)}},
    networking: {networkType: "OVNKubernetes", clusterNetwork: [{cidr: "10.132.0.0/14"}],
                 serviceNetwork: [{cidr: "172.31.0.0/16"}]},
    etcd: {managementType: "Managed", managed: {storage: {type: "PersistentVolume"}}},
    services: [{service: "APIServer", servicePublishingStrategy: {type: "LoadBalancer"}},
               {service: "OAuthServer", servicePublishingStrategy: {type: "Route"}},
               {service: "Konnectivity", servicePublishingStrategy: {type: "Route"}},
               {service: "Ignition", servicePublishingStrategy: {type: "Route"}}]}}')" "HostedCluster"
# Its status as the HostedCluster controller writes it: three releases completed.
api PATCH "$HS/namespaces/$NS/hostedclusters/a/status" "$(jq -nc --arg r0 "$R0" --arg r1 "$R1" --arg r2 "$R2" '{status: {
  ignitionEndpoint: "ignition.a.e2e.local", kubeconfig: {name: "a-admin-kubeconfig"}, payloadArch: "AMD64",
  version: {desired: {image: $r2, version: "4.18.2"}, observedGeneration: 1, availableUpdates: [],
    history: [{state: "Completed", image: $r2, version: "4.18.2", startedTime: "2026-03-02T02:00:00Z",
               completionTime: "2026-03-02T03:00:00Z", verified: false},
              {state: "Completed", image: $r1, version: "4.18.1", startedTime: "2026-03-01T02:00:00Z",
               completionTime: "2026-03-01T03:00:00Z", verified: false},
              {state: "Completed", image: $r0, version: "4.18.0", startedTime: "2026-02-01T02:00:00Z",
               completionTime: "2026-02-01T03:00:00Z", verified: false}]}}}')" >/dev/null ||
  not_ok "HostedCluster status"

# ---- beside real Cluster API: what HyperShift gives it ---------------------------
#
# On a "capi-hypershift" instance Cluster API's own controllers turn
# HyperShift's MachineDeployment into MachineSets and Machines. The test then
# plays, as HyperShift does for Cluster API:
#   - the HostedCluster controller: the Cluster named after the infraID, its
#     control plane the HostedControlPlane and its infrastructure an AWSCluster
#     that HyperShift manages itself and marks ready
#     (hostedcluster_controller.go reconcileCAPICluster;
#     internal/platform/aws/aws.go reconcileAWSCluster);
#   - the control-plane operator: the HostedControlPlane's status (initialized,
#     ready, externally managed: hostedcontrolplane_controller.go) and the
#     <infraID>-kubeconfig Secret Cluster API reaches the hosted cluster with
#     (manifests/kas.go KASServiceCAPIKubeconfigSecret); the hosted cluster is
#     this instance's own API server;
#   - the AWS provider and the kubelets: each AWSMachine Cluster API creates
#     gets an instance ID, a providerID, an address and status.ready (the
#     v1beta1 contract HyperShift's labels name), and a Ready Node with that
#     providerID joins the hosted cluster.
REAL_CAPI=${E_CAPI:-0}
INFRA=a-e2e
if [ "$REAL_CAPI" = 1 ]; then
  NODES=$CTL_TMP/nodes # cluster-scoped: deleted at the end
  ep=${E_SERVER#https://}
  post "$HS/namespaces/$CP/hostedcontrolplanes" "$(jq -nc --arg r "$R2" --arg i "$INFRA" '{
    apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedControlPlane", metadata: {name: "a"},
    spec: {releaseImage: $r, pullSecret: {name: "pull-secret"}, infraID: $i, issuerURL: "https://e2e.local",
      sshKey: {}, dns: {baseDomain: "e2e.local"}, platform: {type: "AWS"},
      etcd: {managementType: "Managed", managed: {storage: {type: "PersistentVolume"}}},
      services: ["APIServer", "OAuthServer", "Konnectivity", "Ignition"]
        | map({service: ., servicePublishingStrategy: {type: "Route"}})}}')" "HostedControlPlane"
  api PATCH "$HS/namespaces/$CP/hostedcontrolplanes/a/status" "$(jq -nc --arg h "${ep%:*}" --argjson p "${ep##*:}" '{
    status: {ready: true, initialized: true, externalManagedControlPlane: true,
             controlPlaneEndpoint: {host: $h, port: $p}}}')" >/dev/null || not_ok "HostedControlPlane status"
  post "$CAPI_AWS/namespaces/$CP/awsclusters" "$(jq -nc --arg i "$INFRA" --arg h "${ep%:*}" --argjson p "${ep##*:}" '{
    apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2", kind: "AWSCluster",
    metadata: {name: $i, annotations: {"cluster.x-k8s.io/managed-by": "external"}},
    spec: {region: "us-east-1", controlPlaneEndpoint: {host: $h, port: $p}}}')" "AWSCluster"
  api PATCH "$CAPI_AWS/namespaces/$CP/awsclusters/$INFRA/status" '{"status": {"ready": true}}' >/dev/null ||
    not_ok "AWSCluster status"
  post "/api/v1/namespaces/$CP/secrets" "$(jq -nc --arg i "$INFRA" --arg k "$(base64 -w0 "$KCFG")" '{
    apiVersion: "v1", kind: "Secret", type: "cluster.x-k8s.io/secret",
    metadata: {name: ($i + "-kubeconfig"), labels: {"cluster.x-k8s.io/cluster-name": $i}},
    data: {value: $k}}')" "the hosted cluster's kubeconfig Secret"
  post "$CAPI/namespaces/$CP/clusters" "$(jq -nc --arg i "$INFRA" --arg cp "$CP" --arg hc "$NS/a" '{
    apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Cluster",
    metadata: {name: $i, annotations: {"hypershift.openshift.io/cluster": $hc}},
    spec: {controlPlaneRef: {apiVersion: "hypershift.openshift.io/v1beta1", kind: "HostedControlPlane",
                             namespace: $cp, name: "a"},
           infrastructureRef: {apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2", kind: "AWSCluster",
                               namespace: $cp, name: $i}}}')" "Cluster"
  # aws_provider: the AWS provider and the kubelets, every 0.2 s.
  aws_provider() {
    local m id n ip now ds
    while :; do
      for m in $(api GET "$CAPI_AWS/namespaces/$CP/awsmachines" | jq -r '(.items // [])[]
          | select(.status.ready != true and .metadata.deletionTimestamp == null)
          | select(any(.metadata.ownerReferences[]?; .kind == "Machine")) | .metadata.name'); do
        id=i-$(sha1sum <<<"$CP/$m" | cut -c1-17)
        ip=10.0.$((0x${id:2:2})).$((0x${id:4:2}))
        n=ip-${ip//./-}.ec2.internal
        now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        api PATCH "$CAPI_AWS/namespaces/$CP/awsmachines/$m" "$(jq -nc --arg id "$id" \
          '{spec: {instanceID: $id, providerID: ("aws:///us-east-1a/" + $id)}}')" >/dev/null || continue
        api PATCH "$CAPI_AWS/namespaces/$CP/awsmachines/$m/status" "$(jq -nc --arg ip "$ip" --arg n "$n" \
          '{status: {ready: true, instanceState: "running",
                     addresses: [{type: "InternalIP", address: $ip}, {type: "InternalDNS", address: $n}]}}')" >/dev/null ||
          continue
        # The instance boots from its user data: the ignition server serves it
        # for the token of the same config (token-<pool>-<hash> beside
        # user-data-<pool>-<hash>: nodepool/token.go) while that Secret is
        # there, and marks it reached (ignition-server/cmd/start.go). No
        # user data or no token: the instance never joins.
        # A boot that finds neither is recorded in $BOOT_FAILED (the
        # AWSMachine is ready, so it is not tried again).
        ds=$(get "$CAPI/namespaces/$CP/machines/$m" '.spec.bootstrap.dataSecretName // empty')
        api GET "$SECRETS/$ds" >/dev/null 2>&1 && api GET "$SECRETS/token-${ds#user-data-}" >/dev/null 2>&1 ||
          { echo "$m $ds" >>"$BOOT_FAILED"; continue; }
        api PATCH "$SECRETS/token-${ds#user-data-}" '{"metadata": {"annotations": {"hypershift.openshift.io/ignition-reached": "True"}}}' \
          >/dev/null
        echo "$n" >>"$NODES"
        api POST /api/v1/nodes "$(jq -nc --arg n "$n" --arg id "$id" '{apiVersion: "v1", kind: "Node",
          metadata: {name: $n, labels: {"kubernetes.io/hostname": $n, "node-role.kubernetes.io/worker": ""}},
          spec: {providerID: ("aws:///us-east-1a/" + $id)}}')" application/json >/dev/null
        api PATCH "/api/v1/nodes/$n/status" "$(jq -nc --arg t "$now" --arg ip "$ip" '{status: {
          addresses: [{type: "InternalIP", address: $ip}],
          conditions: ([["MemoryPressure", "False", "KubeletHasSufficientMemory"],
                        ["DiskPressure", "False", "KubeletHasNoDiskPressure"],
                        ["PIDPressure", "False", "KubeletHasSufficientPID"],
                        ["Ready", "True", "KubeletReady"]]
            | map({type: .[0], status: .[1], reason: .[2], message: "stand-in kubelet",
                   lastHeartbeatTime: $t, lastTransitionTime: $t}))}}')" >/dev/null
      done
      sleep 0.2
    done
  }
  # What the two below record, named before they start (each runs in a
  # subshell of its own).
  BOOT_FAILED=$CTL_TMP/boot-failed TOKENS_EXPIRED=$CTL_TMP/tokens-expired
  : >"$BOOT_FAILED"
  : >"$TOKENS_EXPIRED"
  aws_provider &
  AWS_PID=$!
  # ignition_server: the ignition server's token Secret controller, every
  # 0.5 s: a token whose expiry has passed is removed
  # (ignition-server/controllers/tokensecret_controller.go, isTokenExpired,
  # processExpiredToken), its expiry read as HS_TOKEN_TTL after HyperShift
  # marked it (HyperShift writes now + 2 h). Each removal is appended to
  # $TOKENS_EXPIRED.
  ignition_server() {
    local t
    while :; do
      for t in $(api GET "$SECRETS" | jq -r --arg a "$EXPIRY" --argjson ttl "$HS_TOKEN_TTL" --argjson now "$(date +%s)" \
          '.items[] | select(.metadata.name | startswith("token-")) | select(.metadata.annotations[$a] != null)
           | select((.metadata.annotations[$a] | fromdateiso8601) - 7200 + $ttl <= $now) | .metadata.name'); do
        api DELETE "$SECRETS/$t" >/dev/null 2>&1 && echo "$t $(date +%s)" >>"$TOKENS_EXPIRED"
      done
      sleep 0.5
    done
  }
  ignition_server &
  IGN_PID=$!
fi

# ---- the controller, HyperShift's reconciler, the NodePool -------------------------

WPORT=$(free_port)
holds_webhook_config "$WPORT" "$NS" "$CP" |
  jq -c --argjson np "${NP_HOLD:-1}" --argjson md "${MD_HOLD:-1}" '.webhooks |= map(select(.clientConfig.url as $u
    | ($np == 0 and ($u | endswith("/hold/nodepools"))) or ($md == 0 and ($u | endswith("/hold/machinedeployments"))) | not))' |
  k apply -f - >/dev/null || not_ok "webhook configuration"
start_ctl a "$NS" "$SIM0" "$SCALE" --webhook-bind-address "127.0.0.1:$WPORT" \
  --webhook-cert-file "$CERT" --webhook-key-file "$KEY" || { not_ok "controller starts"; summary; exit 1; }
HS_LOG=$CTL_TMP/hypershift.log
HYPERSHIFT=system:serviceaccount:hypershift:operator
kubeconfig_as "$HYPERSHIFT" "$CTL_TMP/hypershift.kubeconfig" || not_ok "HyperShift's kubeconfig"
# hs_start: HyperShift's reconciler, its log appended to (a restart: an
# operator update).
hs_start() {
  rm -f "$CTL_TMP/hypershift.ready"
  "$HS_BIN" --kubeconfig "$CTL_TMP/hypershift.kubeconfig" --namespace "$NS" --control-plane-namespace "$CP" \
    --release "$R0=4.18.0" --release "$R1=4.18.1" --release "$R2=4.18.2" --ready-file "$CTL_TMP/hypershift.ready" \
    >>"$HS_LOG" 2>&1 &
  HS_PID=$!
}
hs_start
check "HyperShift's NodePool reconciler starts" wait_for 60 test -s "$CTL_TMP/hypershift.ready"

post "$HS/namespaces/$NS/nodepools" "$(jq -nc --arg r "$R0" --arg p "$POLICY_ANN" --argjson n "$N0" '{
  apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
  metadata: {name: "np", annotations: {($p): "weekend", "hypershift.openshift.io/machine-health-check-timeout": "5s"}},
  spec: {clusterName: "a", replicas: $n, arch: "amd64", release: {image: $r},
    management: {upgradeType: "Replace", autoRepair: true, replace: {strategy: "RollingUpdate",
      rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}},
    platform: {type: "AWS", aws: {instanceType: "m5.large", subnet: {id: "subnet-0123456789"}}}}}')" "NodePool"

# names PREFIX: the Secrets of the control-plane namespace named PREFIX*, sorted.
names() { api GET "$SECRETS" | jq -r --arg p "$1" '[.items[].metadata.name | select(startswith($p))] | sort | join(" ")'; }
templates() { api GET "$CAPI_AWS/namespaces/$CP/awsmachinetemplates" | jq -r '[.items[].metadata.name] | sort | join(" ")'; }
md_written() { [ -n "$(get "$MD" '.spec.template.spec.bootstrap.dataSecretName // empty')" ]; }
# hs_errors: the end of HyperShift's log and the NodePool's conditions, as comments.
hs_errors() {
  tail -8 "$HS_LOG" | cut -c1-700 | sed 's/^/#   /'
  get "$NP" '.status.conditions // [] | .[] | "#   NodePool \(.type)=\(.status) \(.reason // "") \(.message // "")"'
}
if wait_for 30 md_written; then
  ok "HyperShift writes the MachineDeployment"
else
  not_ok "HyperShift writes the MachineDeployment"
  hs_errors
  summary
  exit 1
fi
# Cluster API's MachineDeployment controller, done rolling out: status as spec.
md_done() {
  local md
  md=$(api GET "$MD") || return 1
  api PATCH "$MD/status" "$(jq -c '{status: {observedGeneration: .metadata.generation,
    replicas: .spec.replicas, updatedReplicas: .spec.replicas, readyReplicas: .spec.replicas,
    availableReplicas: .spec.replicas, unavailableReplicas: 0, phase: "Running"}}' <<<"$md")" >/dev/null
}
# machines: "MachineSet:bootstrap-secret:phase" of every Machine, sorted
# (real Cluster API only).
machines() {
  api GET "$CAPI/namespaces/$CP/machines" | jq -r '[.items[] | "\(.metadata.labels["cluster.x-k8s.io/set-name"] // "-"):\(.spec.bootstrap.dataSecretName // "-"):\(.status.phase // "-")"] | sort | join(" ")'
}
# rep N WORD: WORD N times, space-separated.
rep() { local i out=""; for ((i = 0; i < $1; i++)); do out+="${out:+ }$2"; done; echo "$out"; }
# count_on DS [PHASE]: how many Machines boot from user data DS (and are in PHASE).
count_on() { machines | tr ' ' '\n' | grep -c ":$1:${2:-[^:]*}\$"; }
machinesets() { api GET "$CAPI/namespaces/$CP/machinesets" | jq -r '[.items[].metadata.name] | sort | join(" ")'; }
reports() { [ "$(np_get np .status.version)" = "$1" ]; }
# since INSTANT: real seconds from INSTANT (epoch seconds) to now.
since() { awk -v n="$(now_us)" -v b="$1" 'BEGIN { printf "%.3f", n / 1e6 - b }'; }
if [ "$REAL_CAPI" = 1 ]; then
  check "HyperShift reports 4.18.0 once Cluster API's rollout is done (status.version)" wait_for 120 reports 4.18.0
  reports 4.18.0 || { echo "# machines: $(machines)"; grep -E '"level":"error"|ERROR|^E[0-9]' "$E_CAPI_CORE_LOG" | tail -5 | cut -c1-400 | sed 's/^/#   capi: /'; }
else
  md_done || not_ok "MachineDeployment status (the rollout done)"
  check "HyperShift reports 4.18.0 once the rollout is done (status.version)" wait_for 30 reports 4.18.0
fi
check "the controller opts the NodePool in" wait_for 10 np_labelled np
sleep 2 # HyperShift's reconciles of the rollout's end settle
tok0=$(names token-) ud0=$(names user-data-) tmpl0=$(templates)
gen0=$(get "$MD" .metadata.generation) ds0=$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)
echo "# HyperShift wrote: tokens [$tok0], user data [$ud0], templates [$tmpl0], MachineDeployment generation $gen0 -> $ds0"
check_eq "one token, one user-data Secret, one template" "1 1 1" \
  "$(wc -w <<<"$tok0") $(wc -w <<<"$ud0") $(wc -w <<<"$tmpl0")"
check_eq "the MachineDeployment's bootstrap is HyperShift's user data" "$ud0" "$ds0"
if [ "$REAL_CAPI" = 1 ]; then
  ms0=$(machinesets) m0=$(machines)
  echo "# Cluster API made: MachineSets [$ms0], Machines [$m0]"
  check_eq "Cluster API runs $N0 machines on that user data, in one MachineSet" \
    "$(rep "$N0" "$ms0:$ud0:Running")" "$m0"
fi

# HyperShift's errors: a write that met one of the controller's (the
# opted-in label on a new NodePool, say) is refused with a conflict and
# tried again, as any two writers of one object. Beside real Cluster API two
# more are HyperShift's own races with it, also retried on its next pass: a
# Machine Cluster API deleted between HyperShift's list and its CreateOrPatch
# (nodepool/capi.go, reconcileMachineDeployment's loop over the Machines:
# "resourceVersion should not be set on objects to be created"), and a
# machine template its cache has not caught up with ("already exists").
# Anything else is a failure.
hs_log_checks() {
  errors=$(grep '"level":"error"' "$HS_LOG" | jq -r '"\(.msg): \(.error // "")"' 2>/dev/null)
  [ -z "$errors" ] || cut -c1-300 <<<"$errors" | sed 's/^/# HyperShift error: /'
  errors=$(grep -v '^$' <<<"$errors")
  conflicts=$(grep -c 'the object has been modified' <<<"$errors")
  others=$(grep -v 'the object has been modified' <<<"$errors")
  if [ "$REAL_CAPI" = 1 ]; then
    races='resourceVersion should not be set on objects to be created|awsmachinetemplates[.]infrastructure[.]cluster[.]x-k8s[.]io "[^"]*" already exists'
    echo "# figure: HyperShift's races with Cluster API, tried again: $(grep -cE "$races" <<<"$others")"
    others=$(grep -vE "$races" <<<"$others")
  fi
  if [ "$HS_SCENARIO" = drift ]; then
    # Stopped for the restart (SIGTERM): the requests in flight end with
    # the manager's context.
    echo "# figure: HyperShift's requests cancelled by its stop for the restart: $(grep -c 'context canceled' <<<"$others")"
    others=$(grep -v 'context canceled' <<<"$others")
  fi
  echo "# figure: HyperShift's writes refused with a conflict and tried again: $conflicts"
  check_eq "HyperShift's reconciler logged no error but conflicts$([ "$REAL_CAPI" = 1 ] && echo " and its races with Cluster API")" 0 \
    "$(grep -c . <<<"$others")"
  check "no write fight: at most 3 of HyperShift's writes met the controller's" [ "$conflicts" -le 3 ]
}

# ---- drift: a configuration HyperShift makes by itself, held without a rollout ---------
#
# HS_SCENARIO=drift. The control-plane operator changes a core ignition
# ConfigMap (as its update does): HyperShift's configuration hash covers it
# (nodepool/config.go, getCoreConfigs), no NodePool write carries it. A core
# ConfigMap's event wakes no NodePool (nodepool_controller.go,
# enqueueNodePoolsForConfig lists NodePools in the ConfigMap's namespace,
# the control plane's), so HyperShift acts at the pool's next reconcile, which
# a HostedCluster status write gives here. It writes a new token and user
# data, marks the running token to expire (token.go) and points the
# MachineDeployment at the new user data: admitted with strategy OnDelete and
# the held-drift record (pkg/decide/drift.h), so Cluster API makes the new
# MachineSet and replaces none of the pool's 3 machines. The hold outlives
# the running token (HS_TOKEN_TTL: 10 s here, 2 h in HyperShift; the
# ignition server stand-in removes it): a scale-up to 5 during the hold
# makes its machines from the new template, whose token is HyperShift's
# active one, and they join; an old machine whose Node goes NotReady, which
# Cluster API declines to remediate (an older revision), is deleted by the
# controller and replaced from the new template; no boot fails and
# HyperShift's NodePool status stays true to the machines. Then an operator update: HyperShift's
# reconciler restarts while a second core ConfigMap changes, and its first
# pass moves the template again (the record follows, still no machine
# replaced). The window opens: the controller writes HyperShift's strategy
# back and Cluster API replaces the 5 machines.
# MD_HOLD=0 (the hold left out): the rollout starts at once (the negative
# control: the checks below fail, the figure says how many were replaced).
if [ "$HS_SCENARIO" = drift ]; then
  SCENARIO=drift
  DRIFT_ANN=$CM/held-drift
  strategy() { get "$MD" '.spec.strategy.type // "-"'; }
  drift_rec() { get "$MD" ".metadata.annotations[\"$DRIFT_ANN\"] // \"\""; }
  c0=$(get "/api/v1/namespaces/$CP/configmaps/core-ignition-2" .data.config)
  api PATCH "/api/v1/namespaces/$CP/configmaps/core-ignition-2" "$(jq -nc --arg c "$c0" \
    '{data: {config: ($c + "\n  kernelArguments:\n  - e2e.drift=1\n")}}')" >/dev/null ||
    not_ok "the control-plane operator's update of core-ignition-2"
  t_drift=$(now_us)
  api PATCH "$HS/namespaces/$NS/hostedclusters/a/status" '[{"op": "add", "path": "/status/conditions/-",
    "value": {"type": "E2EDriftPoke", "status": "True", "reason": "Poke", "message": "drift", "lastTransitionTime": "2026-03-06T00:00:00Z"}}]' \
    application/json-patch+json >/dev/null || not_ok "HostedCluster status write (HyperShift's next reconcile)"
  moved() { [ "$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)" != "$ds0" ]; }
  check "HyperShift points the MachineDeployment at new user data (its configuration changed, no request)" wait_for 20 moved
  ds_d=$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)
  echo "# HyperShift wrote: tokens [$(names token-)], user data [$(names user-data-)], MachineDeployment -> $ds_d"
  check_eq "HyperShift's side: a second token and user data, the running token set to expire (token.go)" "2 yes" \
    "$(wc -w <<<"$(names token-)") $([ "$(get "$SECRETS/$tok0" ".metadata.annotations[\"$EXPIRY\"] // \"-\"")" != - ] && echo yes || echo no)"
  check_eq "admitted with rollout strategy OnDelete and the held-drift record, in the same write" \
    "OnDelete user data $ds0 -> $ds_d" "$(strategy) $(drift_rec | jq -r .input 2>/dev/null)"
  check_eq "the strategy HyperShift asked for is recorded" RollingUpdate "$(drift_rec | jq -r .strategy 2>/dev/null)"
  check_eq "the NodePool's release is untouched (no request)" "$R0" "$(np_get np .spec.release.image)"
  held_msg() { [[ "$(cond "$NP" ChangesPending message)" == *"HyperShift configuration update: user data $ds0 -> $ds_d"* ]]; }
  check "ChangesPending names the held drift and the window" wait_for 10 held_msg
  held_msg || echo "# ChangesPending: $(cond "$NP" ChangesPending message)"
  check_eq "the companion's heldChange names a HyperShift configuration update" "HyperShift configuration update" \
    "$(np_cm "$NS" np .heldChange.summary)"
  out=$("$HCP_BIN" explain --kubeconfig "$KCFG" nodepool "$NS/np" --at "$(date -u -d "@$(sim_hi a | cut -d. -f1)" +%Y-%m-%dT%H:%M:%SZ)" 2>&1)
  check_contains "hcp-controller explain names it as held, with no machine replaced before the window" \
    "Change:     held: HyperShift configuration update: user data $ds0 -> $ds_d" "$out"
  check_eq "HyperShift reports the configuration update it wants (UpdatingConfig) and the release that runs" "True 4.18.0" \
    "$(cond "$NP" UpdatingConfig status) $(np_get np .status.version)"
  if [ "$REAL_CAPI" = 1 ]; then
    sleep 8 # Cluster API reconciles the MachineDeployment within a second or two
    echo "# Cluster API made: MachineSets [$(machinesets)], Machines [$(machines)]"
    check_eq "Cluster API replaces no machine: all $N0 still Running in the first MachineSet" \
      "$(rep "$N0" "$ms0:$ds0:Running")" "$(machines)"
    check_eq "... and made the new template's MachineSet beside it" 2 "$(wc -w <<<"$(machinesets)")"
    # The rollout's first step (maxSurge 1): a machine of the new template;
    # with the hold left out (MD_HOLD=0) Cluster API makes it at once.
    started=$(count_on "$ds_d")
    echo "# figure: drift while restricted, 8 s after HyperShift's template write: rollout machines started before the window $started, old machines deleted $((N0 - $(count_on "$ds0"))) (load average $(cut -d' ' -f1 /proc/loadavg))"
    # np_true N: HyperShift's NodePool status is true to the machines: N
    # replicas available (its status.replicas, from the MachineDeployment),
    # N Machines Running, version 4.18.0, Ready True (capi.go bubbles both up).
    np_true() {
      [ "$(np_get np '"\(.status.replicas) \(.status.version) \(.status.conditions // [] | map(select(.type == "Ready"))[0].status // "-")"')" = "$1 4.18.0 True" ] &&
        [ "$(machines | tr ' ' '\n' | grep -c ':Running$')" = "$1" ]
    }
    np_said() { echo "# NodePool status: $(np_get np '"replicas \(.status.replicas), version \(.status.version), Ready \(.status.conditions // [] | map(select(.type == "Ready"))[0].status // "-")"'); machines: $(machines)"; }
    # A hold longer than the token's life: the running machines' token
    # (the one HyperShift marked to expire when it wrote the new user data)
    # expires and the ignition server removes it, HS_TOKEN_TTL after the
    # mark. What the machines made during the rest of the hold boot from
    # is the held template's user data, whose token is HyperShift's active
    # one (token.go: "active token should never be marked as expired").
    check "the hold outlives the running machines' token: the ignition server removes it (TTL $HS_TOKEN_TTL s here, 2 h in HyperShift)" \
      wait_for "$((HS_TOKEN_TTL + 20))" eval '! api GET "$SECRETS/$tok0" >/dev/null 2>&1'
    check "HyperShift's NodePool status true to the machines: $N0 available, $N0 Running, 4.18.0, Ready" wait_for 30 np_true "$N0"
    np_true "$N0" || np_said
    # Still held, a scale from 3 to 5: the new machines come from the new
    # template (the old MachineSet makes none under OnDelete), on the user
    # data and token HyperShift keeps valid; they join.
    t0=$(now_us)
    api PATCH "$NP" "{\"spec\": {\"replicas\": $((N0 + 2))}}" >/dev/null || not_ok "scale to $((N0 + 2))"
    joined_new() { [ "$(count_on "$ds_d" Running)" = 2 ] && [ "$(count_on "$ds0" Running)" = "$N0" ]; }
    check "a scale to $((N0 + 2)) during the hold: the 2 new machines boot from the new user data and join; the $N0 old ones stay" wait_for 60 joined_new
    joined_new || echo "# machines: $(machines)"
    echo "# figure: drift held, NodePool scale $N0 -> $((N0 + 2)) to the new machines Running: $((($(now_us) - t0) / 1000)) ms"
    check "HyperShift's NodePool status true to the machines: $((N0 + 2)) available and Running, 4.18.0, Ready" wait_for 30 np_true "$((N0 + 2))"
    np_true "$((N0 + 2))" || np_said
    # Still held, an old machine's Node goes NotReady. The MachineHealthCheck
    # HyperShift writes for autoRepair marks it; Cluster API does not
    # remediate a machine of an older revision (machineset_controller.go,
    # reconcileUnhealthyMachines: OwnerRemediated False, CannotBeRemediated,
    # left to the rollout), and the rollout is held. The controller deletes
    # it (pkg/controller/remediate.c); under OnDelete Cluster API makes the
    # replacement in the new MachineSet, from the user data HyperShift keeps
    # valid: it joins.
    check "HyperShift writes the pool's MachineHealthCheck (autoRepair)" wait_for 10 \
      eval '[ -n "$(get "$CAPI/namespaces/$CP/machinehealthchecks/np" ".metadata.name // empty")" ]'
    victim=$(api GET "$CAPI/namespaces/$CP/machines" | jq -r --arg ds "$ds0" \
      '[.items[] | select(.spec.bootstrap.dataSecretName == $ds and .status.nodeRef != null)][0] | "\(.metadata.name) \(.status.nodeRef.name)"')
    t0=$(now_us)
    api PATCH "/api/v1/nodes/${victim#* }/status" "$(jq -nc --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '{status: {
      conditions: [{type: "Ready", status: "False", reason: "KubeletNotReady", message: "stand-in kubelet: stopped",
                    lastHeartbeatTime: $t, lastTransitionTime: $t}]}}')" >/dev/null || not_ok "an old machine's Node goes NotReady"
    replaced_new() {
      ! api GET "$CAPI/namespaces/$CP/machines" | jq -e --arg v "${victim%% *}" 'any(.items[]; .metadata.name == $v)' >/dev/null &&
        [ "$(count_on "$ds_d" Running)" = 3 ] && [ "$(count_on "$ds0" Running)" = "$((N0 - 1))" ]
    }
    check "an old machine fails its health check during the hold: deleted and replaced from the new user data ($((N0 - 1)) old, 3 new Running)" \
      wait_for 60 replaced_new
    replaced_new || { echo "# machines: $(machines)"; grep -E 'remediat' "${CTL_LOG[a]}" | tail -3 | cut -c1-400 | sed 's/^/#   controller: /'; }
    rem=$(grep -m1 "machine of the older template remediated" "${CTL_LOG[a]}" | awk '{ print $1 }')
    rem=$(awk -v r="$(secs "${rem:-1970-01-01T00:00:00Z}")" -v t="$t0" 'BEGIN { printf "%d", (r - t / 1e6) * 1000 }')
    echo "# figure: drift held, an old machine's Node NotReady to its replacement Running from the new template (MachineHealthCheck timeout 5 s): $((($(now_us) - t0) / 1000)) ms; the controller's delete at $rem ms (load average $(cut -d' ' -f1 /proc/loadavg))"
    check_eq "Cluster API declined it for its revision, the controller deleted it: one MachineRemediated Event, counted once" "1 1" \
      "$(count_events "$NS" np MachineRemediated) $(metric a change_management_held_drift_remediations_total)"
    check "HyperShift's NodePool status true to the machines: $((N0 + 2)) available and Running, 4.18.0, Ready (after the remediation)" \
      wait_for 30 np_true "$((N0 + 2))"
    np_true "$((N0 + 2))" || np_said
    # The figure: the machines made after the running token expired.
    joined=$(count_on "$ds_d" Running) failed=$(grep -c . "$BOOT_FAILED")
    echo "# figure: a hold longer than the token TTL ($HS_TOKEN_TTL s here): machines made during it (scale $N0 -> $((N0 + 2)), one remediation) that became nodes $joined of 3, bootstrap failures $failed (load average $(cut -d' ' -f1 /proc/loadavg))"
    check_eq "every machine made after the token expired became a node; no boot failed" "3 0" "$joined $failed"
  fi
  # Other writers of the MachineDeployment while the drift is held: an
  # SRE's kubectl patch of its strategy and a server-side apply of it are
  # kept at OnDelete and told so (and how to let it through now); another
  # tool's annotation goes through untouched. (Not the cluster autoscaler's
  # min/max-size annotations: HyperShift writes those on every pass,
  # nodepool/capi.go.)
  out=$(kubectl --kubeconfig "$KCFG" -n "$CP" patch machinedeployments.v1beta1.cluster.x-k8s.io np \
    --type merge -p '{"spec": {"strategy": {"type": "RollingUpdate"}}}' 2>&1)
  check_contains "kubectl patch of the strategy: kept OnDelete, and told" \
    "strategy RollingUpdate: OnDelete is kept until 2026-03-07T01:00:00Z while HyperShift's own configuration update is held" "$out"
  out=$(jq -nc --arg ns "$CP" '{apiVersion: "cluster.x-k8s.io/v1beta1", kind: "MachineDeployment",
    metadata: {name: "np", namespace: $ns}, spec: {strategy: {type: "RollingUpdate"}}}' |
    kubectl --kubeconfig "$KCFG" apply --server-side --force-conflicts --field-manager sre -f - 2>&1)
  check_contains "server-side apply of the strategy: kept OnDelete, and told" \
    "then RollingUpdate is written back; a PermissiveUntil override on the NodePool lets it through now" "$out"
  kubectl --kubeconfig "$KCFG" -n "$CP" annotate machinedeployments.v1beta1.cluster.x-k8s.io np --overwrite \
    inventory.example.com/owner=sre >/dev/null 2>&1 || not_ok "another tool's annotation"
  check_eq "after them: still OnDelete with the record; the other tool's annotation stored" "OnDelete yes sre" \
    "$(strategy) $([ -n "$(drift_rec)" ] && echo yes || echo no) $(get "$MD" '.metadata.annotations["inventory.example.com/owner"] // "-"')"
  # An operator update: HyperShift's reconciler stops, the control-plane
  # operator renders core-ignition-3 anew meanwhile, and the reconciler
  # starts again. Its secret janitor reconciles every token and user-data
  # Secret at start (secret_janitor.go) and its first pass of the pool
  # writes the newer template, with no poke: the drift already held stays
  # held, the record follows the newest change.
  hs_stop
  c3=$(get "/api/v1/namespaces/$CP/configmaps/core-ignition-3" .data.config)
  api PATCH "/api/v1/namespaces/$CP/configmaps/core-ignition-3" "$(jq -nc --arg c "$c3" \
    '{data: {config: ($c + "\n  kernelArguments:\n  - e2e.operator-update=1\n")}}')" >/dev/null ||
    not_ok "the control-plane operator's update of core-ignition-3"
  hs_start
  check "HyperShift's reconciler starts again (an operator update)" wait_for 60 test -s "$CTL_TMP/hypershift.ready"
  moved_again() { [ "$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)" != "$ds_d" ]; }
  check "at its first pass HyperShift points the MachineDeployment at newer user data (no poke)" wait_for 30 moved_again
  ds_d0=$ds_d
  ds_d=$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)
  echo "# HyperShift wrote after the restart: tokens [$(names token-)], user data [$(names user-data-)], MachineDeployment -> $ds_d"
  check_eq "still OnDelete; the record names the newest change and keeps the strategy HyperShift asked for" \
    "OnDelete user data $ds_d0 -> $ds_d RollingUpdate" \
    "$(strategy) $(drift_rec | jq -r '"\(.input) \(.strategy)"' 2>/dev/null)"
  if [ "$REAL_CAPI" = 1 ]; then
    sleep 5
    check_eq "Cluster API replaces no machine ($((N0 - 1)) on the first user data, 3 on the second)" "$((N0 - 1)) 3" \
      "$(count_on "$ds0" Running) $(count_on "$ds_d0" Running)"
  fi
  check_eq "the held drift is counted as no unheld change and told as no ChangeNotHeld" "0 0" \
    "$(metrics a | awk '/^change_management_unheld_changes_total/ { s += $2 } END { print s + 0 }') $(count_events "$NS" np ChangeNotHeld)"
  check_eq "no ChangesInitiated before the window" 0 "$(initiated np)"
  # The window opens: the controller writes HyperShift's strategy back.
  released() { [ "$(strategy)" = RollingUpdate ] && [ -z "$(drift_rec)" ]; }
  echo "# the window opens in $(awk -v n="$(sim_hi a)" -v o="$(epoch "$OPEN")" -v k="$SCALE" 'BEGIN { printf "%.1f", (o - n) / k }') s (real)"
  if before_sim a "$OPEN"; then
    check_eq "still held just before the window (strategy, record)" "OnDelete yes" \
      "$(strategy) $([ -n "$(drift_rec)" ] && echo yes || echo no)"
  else
    not_ok "the hold is checked before the window" "the window opened during the scenario (a busy machine)"
  fi
  sleep_until_sim a "$OPEN" 0
  echo "# the window opens (real seconds on the controller's clock from its start: $(awk -v t="$(now_us)" -v t0="${CTL_T0[a]}" 'BEGIN { printf "%.1f", (t - t0) / 1e6 }'))"
  check "the window opens: the controller writes HyperShift's strategy back and drops the record" wait_for "$(real_s 10)" released
  released || {
    echo "# strategy $(strategy), record $(drift_rec)"
    echo "# ChangesPending: $(cond "$NP" ChangesPending message); ChangesPaused: $(cond "$NP" ChangesPaused reason) $(cond "$NP" ChangesPaused message)"
    get "$NP" '.status.conditions // [] | .[] | "#   NodePool \(.type)=\(.status) \(.reason // "") \(.message // "" | .[0:200])"'
    grep -E 'warn|error|released|write' "${CTL_LOG[a]}" | grep -v 'the API server warns' | tail -12 | cut -c1-400 | sed 's/^/#   controller: /'
    metrics a | grep -E '^hcp_controller_' | grep -v bucket | sed 's/^/#   /'; ps -o pid,stat,pcpu,etime,args -p "${CTL_PID[a]}" | sed 's/^/#   /'
    cp "${CTL_LOG[a]}" "${DRIFT_KEEP_LOG:-/dev/null}" 2>/dev/null
  }
  b=$(ctl_real_at a "$OPEN")
  rel=$(grep -m1 -E "held change released kind=NodePool namespace=$NS name=np .*what=\"?held drift" "${CTL_LOG[a]}" | awk '{ print $1 }')
  rel=$(awk -v r="$(secs "${rel:-1970-01-01T00:00:00Z}")" -v b="$b" 'BEGIN { printf "%.3f", r - b }')
  echo "# figure: window open -> the controller releases the held drift: $rel s (load average $(cut -d' ' -f1 /proc/loadavg))"
  in_range "the controller releases it within $(real_s 1) s of the window opening, not before" "$rel" 0 "$(real_s 1)"
  if [ "$REAL_CAPI" = 1 ]; then
    all_new() { [ "$(machines | sed -E 's/(^| )[^ :]*:/\1/g')" = "$(rep "$((N0 + 2))" "$ds_d:Running")" ]; }
    check "Cluster API replaces the $((N0 + 2)) machines in the window: $((N0 + 2)) Running on the newest user data" wait_for 180 all_new
    all_new || echo "# machines: $(machines)"
    echo "# figure: window open -> the drift's rollout done ($((N0 + 2)) machines replaced): $(since "$b") s real"
    cur_moved() { [ "$(cond "$NP" UpdatingConfig status)" != True ]; }
    check "HyperShift reports the configuration update done (UpdatingConfig no longer True)" wait_for 60 cur_moved
    check "HyperShift's NodePool status true to the machines after the rollout: $((N0 + 2)) available and Running, 4.18.0, Ready" \
      wait_for 30 np_true "$((N0 + 2))"
    np_true "$((N0 + 2))" || np_said
    echo "# figure: tokens the ignition server removed as expired during the hold: $(cut -d' ' -f1 "$TOKENS_EXPIRED" | sort -u | tr '\n' ' ')"
    expired_n() { cut -d' ' -f1 "$TOKENS_EXPIRED" | sort -u | grep -c .; }
    check "both outdated tokens expire (the running machines' and the first drift's)" wait_for "$((HS_TOKEN_TTL + 20))" eval '[ "$(expired_n)" = 2 ]'
    check_eq "no boot failed, the window's rollout included" 0 "$(grep -c . "$BOOT_FAILED")"
  fi
  check "ChangesInitiated told once for the held drift" wait_for 10 eval '[ "$(initiated np)" -ge 1 ]'
  sleep 2
  check_eq "ChangesInitiated exactly once" 1 "$(initiated np)"
  hs_log_checks
  hs_stop
  stop_ctl a
  summary
  exit
fi

# ---- restricted: 4.18.2 asked for by a GitOps tool, reverted: withdrawn -------------

SCENARIO=withdrawn
FLUX=system:serviceaccount:flux-system:kustomize-controller
# flux_apply IMAGE: the GitOps tool's server-side apply of the pool's
# release (Flux's field manager, forcing ownership), as its ServiceAccount;
# prints what kubectl prints (its warnings).
flux_apply() {
  jq -nc --arg ns "$NS" --arg i "$1" '{apiVersion: "hypershift.openshift.io/v1beta1", kind: "NodePool",
    metadata: {name: "np", namespace: $ns}, spec: {release: {image: $i}}}' |
    kubectl --kubeconfig "$KCFG" --as "$FLUX" --as-group system:masters apply --server-side \
      --force-conflicts --field-manager kustomize-controller -f - 2>&1
}
flux_apply "$R2" >/dev/null
check_eq "4.18.2 applied by the tool is held: spec.release.image stays, the request is recorded" "$R0 $R2" \
  "$(np_get np .spec.release.image) $(np_get np ".metadata.annotations[\"$REQ\"] // \"{}\" | fromjson | .release.image // \"\"")"
out=$(flux_apply "$R0")
check_contains "the tool's revert withdraws it (the warning kubectl prints)" \
  "Warning: request for release 4.18.2 withdrawn: the write sets the running 4.18.0" "$out"
check_eq "the record goes; who withdrew what is recorded" "none $FLUX release 4.18.2" \
  "$(np_get np "(.metadata.annotations[\"$REQ\"] // \"none\") + \" \" + .metadata.annotations[\"$CM/withdrawn-by\"] + \" \" + .metadata.annotations[\"$CM/withdrawn\"]")"
sleep 3 # HyperShift reconciles within a second of a NodePool change
check_eq "HyperShift writes nothing for the withdrawn request (token, user data, template, MachineDeployment)" \
  "$tok0 | $ud0 | $tmpl0 | $gen0 $ds0" \
  "$(names token-) | $(names user-data-) | $(templates) | $(get "$MD" .metadata.generation) $(get "$MD" .spec.template.spec.bootstrap.dataSecretName)"
check_eq "HyperShift reports 4.18.0, no update" "4.18.0 False" "$(np_get np .status.version) $(cond "$NP" UpdatingVersion status)"
eventually "a ChangeWithdrawn Event" 1 count_events "$NS" np ChangeWithdrawn

# ---- restricted: 4.18.1 asked for, held at the NodePool ----------------------------

SCENARIO=held
out=$(api PATCH "$NP" "{\"spec\": {\"release\": {\"image\": \"$R1\"}}}")
check_eq "spec.release.image stays" "$R0" "$(jq -r .spec.release.image <<<"$out")"
check_eq "the request is recorded" "$R1" \
  "$(jq -r --arg k "$REQ" '.metadata.annotations[$k] // "{}" | fromjson | .release.image // ""' <<<"$out")"
sleep 5 # HyperShift reconciles within a second of a NodePool change
check_eq "HyperShift writes no new token or user data" "$tok0 | $ud0" "$(names token-) | $(names user-data-)"
check_eq "HyperShift writes no new machine template" "$tmpl0" "$(templates)"
check_eq "the MachineDeployment is untouched (generation, bootstrap)" "$gen0 $ds0" \
  "$(get "$MD" .metadata.generation) $(get "$MD" .spec.template.spec.bootstrap.dataSecretName)"
check_eq "the running token carries no expiry" "-" \
  "$(get "$SECRETS/$tok0" ".metadata.annotations[\"$EXPIRY\"] // \"-\"")"
check_eq "HyperShift reports the release that runs (status.version)" 4.18.0 "$(np_get np .status.version)"
check_eq "HyperShift reports no update (UpdatingVersion)" False "$(cond "$NP" UpdatingVersion status)"
check_eq "HyperShift's own conditions stay beside the controller's (ValidReleaseImage)" True \
  "$(cond "$NP" ValidReleaseImage status)"
check_contains "the controller's ChangesPending names the held change" "The held change (release $R1)" \
  "$(cond "$NP" ChangesPending message)"
check_eq "no ChangesInitiated before the window" 0 "$(initiated np)"
if [ "$REAL_CAPI" = 1 ]; then
  check_eq "Cluster API makes no MachineSet and replaces no machine" "$ms0 | $m0" "$(machinesets) | $(machines)"
fi

# ---- still held: admission calls per HyperShift reconcile ----------------------------
#
# What the API server sends the webhooks while HyperShift reconciles a pool
# that carries a held request, with four webhook configurations in turn:
# this suite's (every update), the chart's of the release before this one
# and of this one (matchConditions), and this one's without HyperShift's
# exemption (what the exemption saves). Each HostedCluster status write
# (the test plays its controller; a status write is sent to no webhook)
# has HyperShift reconcile the pool.
SCENARIO=admission-calls
reconciles() { grep -c '"msg":"Reconciling"' "$HS_LOG"; }
calls() { metrics a | awk '/^hcp_controller_admission_requests_total/ { s += $2 } END { print s + 0 }'; }
# per_reconcile SERIES CONFIG-JSON: admission calls per HyperShift reconcile
# over 6 HostedCluster status writes (conditions E2EPoke<SERIES><i>), with
# the webhook configuration given.
per_reconcile() {
  local r0 c0 i
  k apply -f - <<<"$2" >/dev/null || { echo "?"; return; }
  sleep 1
  r0=$(reconciles) c0=$(calls)
  for i in 1 2 3 4 5 6; do
    api PATCH "$HS/namespaces/$NS/hostedclusters/a/status" "$(jq -nc --arg i "$1$i" '[{op: "add", path: "/status/conditions/-",
      value: {type: ("E2EPoke" + $i), status: "True", reason: "Poke", message: $i, lastTransitionTime: "2026-03-06T00:00:00Z"}}]')" \
      application/json-patch+json >/dev/null || not_ok "HostedCluster status write $1$i"
    sleep 0.4
  done
  sleep 1
  awk -v c="$(($(calls) - c0))" -v r="$(($(reconciles) - r0))" 'BEGIN { printf "%.2f (%d calls, %d reconciles)", (r ? c / r : 0), c, r }'
}
before_chart=$CTL_TMP/chart-before
mkdir -p "$before_chart"
git -C "$CTL_REPO" archive "${HCP_CHART_BEFORE:-main}" charts crds | tar -x -C "$before_chart" 2>/dev/null
plain=$(holds_webhook_config "$WPORT" "$NS" "$CP")
f_plain=$(per_reconcile A "$plain")
f_before=$(per_reconcile B "$(CHART_DIR=$before_chart/charts/hcp-controller chart_webhook_config "$WPORT" "$NS" "$CP")")
f_after=$(per_reconcile C "$(chart_webhook_config "$WPORT" "$NS" "$CP")")
f_noexempt=$(per_reconcile D "$(chart_webhook_config "$WPORT" "$NS" "$CP" | jq -c --arg u "$HYPERSHIFT" 'walk(if type == "string" then gsub("\u0027" + $u + "\u0027, "; "") else . end)')")
echo "# figure: admission calls per HyperShift reconcile of a pool carrying a held request: this suite's configuration (no matchConditions) $f_plain; the chart of ${HCP_CHART_BEFORE:-main} $f_before; this chart $f_after; this chart without HyperShift's exemption $f_noexempt"
check_eq "with this chart, HyperShift's reconciles are sent to no webhook, as with the one before" "0 0" \
  "$(awk '{ print $2 + 0 }' <<<"${f_after#*(}") $(awk '{ print $2 + 0 }' <<<"${f_before#*(}")"
k apply -f - <<<"$plain" >/dev/null || not_ok "this suite's webhook configuration again"
check_eq "... and the request is still held as it was" "$R0 $R1" \
  "$(np_get np .spec.release.image) $(np_get np ".metadata.annotations[\"$REQ\"] // \"{}\" | fromjson | .release.image // \"\"")"

# ---- still held: a scale from 2 to 3 goes through, on the release that runs -----------

SCENARIO=held-scale
t0=$(now_us)
out=$(api PATCH "$NP" '{"spec": {"replicas": 3}}')
check_eq "the scale is applied, the release held (replicas, release, request)" "3 $R0 $R1" \
  "$(jq -r --arg k "$REQ" '"\(.spec.replicas) \(.spec.release.image) \(.metadata.annotations[$k] // "{}" | fromjson | .release.image // "")"' <<<"$out")"
md_scaled() { [ "$(get "$MD" .spec.replicas)" = 3 ]; }
check "HyperShift scales the MachineDeployment to 3" wait_for 10 md_scaled
check_eq "on the same user data, with no new token, user data or template" "$ds0 | $tok0 | $ud0 | $tmpl0" \
  "$(get "$MD" .spec.template.spec.bootstrap.dataSecretName) | $(names token-) | $(names user-data-) | $(templates)"
if [ "$REAL_CAPI" = 1 ]; then
  three_old() { [ "$(machines)" = "$ms0:$ud0:Running $ms0:$ud0:Running $ms0:$ud0:Running" ]; }
  check "Cluster API runs a third machine, in the same MachineSet on the same user data" wait_for 60 three_old
  three_old || echo "# machines: $(machines)"
  echo "# figure: change held, NodePool scale 2 -> 3 to 3 machines Running: $((($(now_us) - t0) / 1000)) ms"
else
  md_done || not_ok "MachineDeployment status (the scale done)"
fi
check_eq "HyperShift still reports 4.18.0 and no update" "4.18.0 False" \
  "$(np_get np .status.version) $(cond "$NP" UpdatingVersion status)"
# Read first, then asked whether the window had opened by then: on a busy
# machine it can open before this point; then the pool, not yet Ready after
# the scale (WaitingForAvailableMachines), keeps the change held by the
# health gate (still recorded), or, Ready, has it let through.
pending_msg=$(cond "$NP" ChangesPending message)
held_or_applied=$(np_get np "(.metadata.annotations[\"$REQ\"] // \"{}\" | fromjson | .release.image) // .spec.release.image")
if before_sim a "$OPEN"; then
  check_contains "the held change is still pending" "The held change (release $R1)" "$pending_msg"
else
  echo "# the window opened before the scale was done (a busy machine): $pending_msg"
  check_eq "the held change is still recorded, or let through at the window (it opened meanwhile)" \
    "$R1" "$held_or_applied"
fi

# ---- real Cluster API, still held: a machine whose Node goes NotReady is remediated ----
#
# autoRepair: HyperShift writes a MachineHealthCheck (nodepool/capi.go
# reconcileMachineHealthCheck; its NotReady timeout is 5 s here, through
# HyperShift's own machine-health-check-timeout annotation). Cluster API
# replaces the machine from the running template, whose user data and token
# the hold kept valid: the replacement joins.
if [ "$REAL_CAPI" = 1 ]; then
  SCENARIO=held-remediation
  check "HyperShift writes the pool's MachineHealthCheck (once a machine reached the ignition server)" wait_for 10 \
    eval '[ -n "$(get "$CAPI/namespaces/$CP/machinehealthchecks/np" ".metadata.name // empty")" ]'
  victim=$(api GET "$CAPI/namespaces/$CP/machines" | jq -r '[.items[] | select(.status.nodeRef != null)][0] | "\(.metadata.name) \(.status.nodeRef.name)"')
  t0=$(now_us)
  api PATCH "/api/v1/nodes/${victim#* }/status" "$(jq -nc --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '{status: {
    conditions: [{type: "Ready", status: "False", reason: "KubeletNotReady", message: "stand-in kubelet: stopped",
                  lastHeartbeatTime: $t, lastTransitionTime: $t}]}}')" >/dev/null || not_ok "the Node goes NotReady"
  remediated() {
    ! api GET "$CAPI/namespaces/$CP/machines" | jq -e --arg v "${victim%% *}" 'any(.items[]; .metadata.name == $v)' >/dev/null &&
      three_old
  }
  check "Cluster API replaces machine ${victim%% *} (Node NotReady) from the running template; 3 Running again" \
    wait_for 60 remediated
  echo "# figure: change held, a Node NotReady to its replacement Running (MachineHealthCheck timeout 5 s): $((($(now_us) - t0) / 1000)) ms; $(machines)"
  # Read first, then asked whether the window had opened by then: on a
  # machine so busy that it had, the held release went at its opening and
  # HyperShift's new user data is the window's, not the remediation's.
  running="$(names token-) | $(names user-data-) | $(get "$SECRETS/$tok0" ".metadata.annotations[\"$EXPIRY\"] // \"-\"")"
  if before_sim a "$OPEN"; then
    check_eq "the running token and user data are the ones the replacement booted with, no expiry" \
      "$tok0 | $ud0 | -" "$running"
  else
    echo "# the window opened during the remediation (a busy machine): $running"
    check_contains "the user data the replacement booted with is kept (the window opened meanwhile)" \
      "$ud0" "$running"
  fi
  # The gate reads HyperShift's report of the pool (Ready, AllNodesHealthy).
  # HyperShift watches MachineSets, not Machines (nodepool_controller.go
  # SetupWithManager), so it may report the replacement's health only at its
  # next reconcile; the controller is checked from that report on.
  hs_healthy() { [ "$(cond "$NP" Ready status) $(cond "$NP" AllNodesHealthy status)" = "True True" ]; }
  check "HyperShift reports the pool whole (Ready, AllNodesHealthy)" wait_for 90 hs_healthy
  healthy_at=$(now_us)
  echo "# figure: change held, a Node NotReady to HyperShift's AllNodesHealthy True again: $(((healthy_at - t0) / 1000)) ms"
  # Before the window: the change is pending (held) again. On a machine so
  # busy that the window opened during the remediation: the gate passing
  # lets it through (checked at the window, below).
  pending_again() { [[ "$(cond "$NP" ChangesPending message)" == *"The held change (release $R1)"* ]]; }
  if before_sim a "$OPEN"; then
    check "the held change is pending again once HyperShift reports the pool whole (the health gate passes)" wait_for 20 pending_again
    pending_again || echo "# ChangesPending: $(cond "$NP" ChangesPending message); HyperShift: Ready $(cond "$NP" Ready status) ($(cond "$NP" Ready reason)), AllNodesHealthy $(cond "$NP" AllNodesHealthy status) ($(cond "$NP" AllNodesHealthy reason): $(cond "$NP" AllNodesHealthy message))"
  fi
  echo "# the window opens in $(awk -v n="$(sim_hi a)" -v o="$(epoch "$OPEN")" -v k="$SCALE" 'BEGIN { printf "%.1f", (o - n) / k }') s (real)"
fi

# ---- the window opens: the request is applied, HyperShift rolls it out ----------------

SCENARIO=window
rolled_out() { [ "$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)" != "$ds0" ]; }
check "the window opens: HyperShift points the MachineDeployment at new user data" wait_for 90 rolled_out
rolled_out || grep -E 'warn|error' "${CTL_LOG[a]}" | tail -5 | cut -c1-700 | sed 's/^/#   controller: /'
# The boundary's real instant on the controller's clock.
b=$(ctl_real_at a "$OPEN")
lag=$(since "$b")
echo "# figure: window open -> HyperShift's MachineDeployment update seen: $lag s real (polled every 0.2 s; load average $(cut -d' ' -f1 /proc/loadavg))"
# The controller's write of the held request (its log's "held change
# released"), and HyperShift's of the MachineDeployment after it. (The
# test sees HyperShift's report by polling, so the release may come a poll
# before it.)
released=$(grep -m1 -E "held change released kind=NodePool namespace=$NS name=np( |$)" "${CTL_LOG[a]}" | awk '{ print $1 }')
released=$(secs "${released:-1970-01-01T00:00:00Z}")
echo "# figure: window open -> the controller releases the held request: $(awk -v r="$released" -v b="$b" 'BEGIN { printf "%.3f", r - b }') s, then HyperShift's MachineDeployment update seen $(awk -v r="$released" -v n="$(now_us)" 'BEGIN { printf "%.3f", n / 1e6 - r }') s later"
if awk -v h="${healthy_at:-0}" -v b="$b" 'BEGIN { exit !(h / 1e6 > b) }'; then
  # The window opened during the remediation (a busy machine): the change
  # waited for HyperShift's report of the pool whole (the health gate) and
  # is measured from it, to the controller's release. HyperShift's own
  # reconcile after it is HyperShift's pace.
  from=$(awk -v h="$healthy_at" 'BEGIN { printf "%.6f", h / 1e6 }')
  in_range "the window opened before HyperShift reported the pool whole: the controller releases the request within $(real_s 2) s (real) of that report, not before" \
    "$(awk -v r="$released" -v f="$from" 'BEGIN { printf "%.3f", r - f }')" "-$(real_s 1)" "$(real_s 2)"
  check "HyperShift rolls after the release, not before" lt "$released" "$(awk -v b="$b" -v l="$lag" 'BEGIN { printf "%.3f", b + l }')"
else
  in_range "HyperShift rolls within $(real_s 2) s (real) of the window opening, not before" "$lag" 0 "$(real_s 2)"
fi
if [ "$REAL_CAPI" = 1 ]; then
  new_machine() { [ "$(machines | tr ' ' '\n' | grep -vc "^$ms0:")" -ge 1 ]; }
  check "Cluster API creates the first replacement Machine" wait_for 30 new_machine
  lag=$(since "$b")
  echo "# figure: window open -> Cluster API's first replacement Machine seen: $lag s real (MachineSet, then Machine: Cluster API reconciles an object at most once a second)"
fi
check_eq "the request was applied" "$R1" "$(np_get np .spec.release.image)"
check_eq "the withdrawn 4.18.2 never started: no MachineDeployment or report of it" "0" \
  "$(grep -c '4\.18\.2' <<<"$(get "$MD" .spec.template.spec.version) $(np_get np .status.version)")"
tok1=$(names token-) ud1=$(names user-data-)
ds1=$(get "$MD" .spec.template.spec.bootstrap.dataSecretName)
check_eq "HyperShift made a new token beside the old one" 2 "$(wc -w <<<"$tok1")"
check "the MachineDeployment's bootstrap is the new user data" eval '[[ " $ud1 " == *" $ds1 "* ]]'
# Cluster API's defaulting webhook writes the version with a "v" prefix.
check_eq "the MachineDeployment runs 4.18.1" "$([ "$REAL_CAPI" = 1 ] && echo v)4.18.1" \
  "$(get "$MD" .spec.template.spec.version)"
check "HyperShift writes a new machine template (the new release's image)" \
  wait_for 10 eval '[ "$(templates)" != "$tmpl0" ]'
expiring() { [ "$(get "$SECRETS/$tok0" ".metadata.annotations[\"$EXPIRY\"] // \"-\"")" != - ]; }
check "HyperShift sets an expiry on the old token" wait_for 10 expiring
check_eq "HyperShift reports the update (UpdatingVersion)" True "$(cond "$NP" UpdatingVersion status)"
check_eq "HyperShift still reports 4.18.0 while the machines roll" 4.18.0 "$(np_get np .status.version)"
if [ "$REAL_CAPI" = 1 ]; then
  check "HyperShift reports 4.18.1 once Cluster API's rollout is done" wait_for 180 reports 4.18.1
  lag=$(since "$b")
  echo "# figure: window open -> HyperShift reports 4.18.1 (3 machines replaced, maxSurge 1): $lag s real"
  # without the MachineSet: "bootstrap-secret:phase" of every Machine.
  running_on() { [ "$(machines | sed -E 's/(^| )[^ :]*:/\1/g')" = "$1:Running $1:Running $1:Running" ]; }
  check "Cluster API replaced the 3 machines, onto the new user data" wait_for 60 running_on "$ds1"
  echo "# Cluster API made: MachineSets [$(machinesets)], Machines [$(machines)]"
  check "none of them in the held change's MachineSet" eval '[[ " $(machines) " != *" $ms0:"* ]]'
  # The kubelets' Nodes still there: Cluster API drains and deletes a
  # replaced machine's Node in the hosted cluster.
  live_nodes() { local n c=0; for n in $(sort -u "$NODES"); do api GET "/api/v1/nodes/$n" >/dev/null 2>&1 && c=$((c + 1)); done; echo "$c"; }
  check_eq "Cluster API deleted the replaced machines' Nodes (joined: 2, 1 scaled, 1 remediated, 3 new; left)" "7 3" \
    "$(sort -u "$NODES" | wc -l) $(live_nodes)"
else
  md_done || not_ok "MachineDeployment status (the rollout done)"
  check "HyperShift reports 4.18.1 once the rollout is done" wait_for 30 reports 4.18.1
fi
check "ChangesInitiated told for the held change" wait_for 10 eval '[ "$(initiated np)" -ge 1 ]'
sleep 2 # a second Event would be written by now
check_eq "ChangesInitiated exactly once" 1 "$(initiated np)"
# ---- real Cluster API: the window closes during the next rollout -------------------
#
# 4.18.2 is asked for 8 s (real) before the close, so the rollout is under
# way when the window closes: the controller pauses the MachineDeployment
# (spec.paused and cluster.x-k8s.io/paused with its marker), HyperShift's
# reconciles do not lift the pause (the webhook keeps it in their writes),
# Cluster API starts no replacement after the close, and HyperShift keeps
# reporting the truth: an update in progress on 4.18.1.
if [ "$REAL_CAPI" = 1 ]; then
  SCENARIO=window-close
  bc=$(ctl_real_at a "$CLOSE")
  # to_close: real seconds from the close to now (negative before it).
  to_close() { since "$bc"; }
  wait=$(awk -v t="$(to_close)" 'BEGIN { printf "%.2f", -8 - t }')
  if lt "$wait" 2; then
    not_ok "the first rollout is done 10 s (real) before the close" "$(to_close) s from the close"
  else
    sleep "$wait"
    names0=$(api GET "$CAPI/namespaces/$CP/machines" | jq -r '.items[].metadata.name')
    PATCHED='hcp_controller_admission_requests_total\{result="patched"\}'
    re0=$(metric a hcp_controller_pause_reassertions_total) pa0=$(metric a "$PATCHED")
    out=$(api PATCH "$NP" "{\"spec\": {\"release\": {\"image\": \"$R2\"}}}")
    check_eq "4.18.2, asked for 8 s before the close, is applied at once" "$R2" "$(jq -r .spec.release.image <<<"$out")"
    # Until 12 s after the close, every 0.2 s: each new Machine (stamped
    # when its list was asked for) and the pause (when it was seen) as
    # first seen, in real seconds from the close.
    seen=$CTL_TMP/close-seen
    : >"$seen"
    while lt "$(to_close)" 12; do
      t=$(to_close)
      for n in $(api GET "$CAPI/namespaces/$CP/machines" | jq -r '.items[].metadata.name'); do
        grep -qx "$n" <<<"$names0" || grep -q " machine $n\$" "$seen" || echo "$t machine $n" >>"$seen"
      done
      # The pause stamped once seen (the read can take a while on a busy
      # machine): never earlier than it was.
      grep -q " pause" "$seen" || { is_state "$MD" paused+marker && echo "$(to_close) pause" >>"$seen"; }
      sleep 0.2
    done
    sed 's/^/# seen (s from the close): /' "$seen"
    before=$(awk '$2 == "machine" && $1 < 0' "$seen" | wc -l)
    late=$(awk '$2 == "machine" && $1 > 1.2' "$seen" | wc -l)
    paused_at=$(awk '$2 == "pause" { print $1 }' "$seen")
    echo "# figure: window close during a rollout: replacements started before the close $before, after it $(awk '$2 == "machine" && $1 >= 0' "$seen" | wc -l) (the last at $(awk '$2 == "machine" { t = $1 } END { print t + 0 }' "$seen") s); pause seen at ${paused_at:-never} s"
    check "Cluster API had started the rollout before the close (a new Machine)" [ "$before" -ge 1 ]
    in_range "the controller pauses the MachineDeployment within $(real_s 2.5) s of the close, not before" "${paused_at:--1}" 0 "$(real_s 2.5)"
    check_eq "no replacement starts more than 1 s after the close (0.2 s polling)" 0 "$late"
    check_eq "12 s later the pause holds through HyperShift's reconciles (annotation, spec.paused)" "paused+marker true" \
      "$(pause_state "$MD") $(get "$MD" .spec.paused)"
    check_eq "HyperShift reports the update in progress, on 4.18.1" "True 4.18.1" \
      "$(cond "$NP" UpdatingVersion status) $(np_get np .status.version)"
    re1=$(metric a hcp_controller_pause_reassertions_total) pa1=$(metric a "$PATCHED")
    echo "# figure: from the request to 12 s after the close: admission requests the webhooks answered with a patch $((${pa1:-0} - ${pa0:-0})), pauses the controller put back $((${re1:-0} - ${re0:-0}))"
    running=$(machines | tr ' ' '\n' | grep -c ':Running$')
    check "the pool keeps at least its 3 machines Running (maxUnavailable 0)" [ "$running" -ge 3 ]
  fi
fi

hs_log_checks
hs_stop
stop_ctl a
summary
