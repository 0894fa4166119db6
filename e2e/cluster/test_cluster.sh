#!/usr/bin/env bash
# Smoke test of the local cluster (e2e/cluster.sh): the instances answer, the
# CRDs are served with the behaviour the controller relies on (status
# subresources, pruning, both CAPI versions through Cluster API's own
# conversion and webhooks, validation of the HCMP schema),
# authentication and RBAC fail the way they should, the "hosted" instance is
# independent, and the etcd compaction / apiserver restart helpers work.
#
# Needs `e2e/cluster.sh up main hosted` first (make e2e does it). Prints
# "N passed, N failed" last.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
e2e=$(cd "$here/.." && pwd)
cluster="$e2e/cluster.sh"

# shellcheck source=e2e/lib.sh
. "$e2e/lib.sh"
# check_body NAME COMMAND...: passes when COMMAND succeeds; a failure shows
# the start of the last response body.
check_body() {
  local name=$1
  shift
  if "$@"; then
    ok "$name"
  else
    not_ok "$name" "$(head -c 400 "$tmp/body" 2>/dev/null | tr '\n' ' ')"
  fi
}

tmp=$(mktemp -d)
scratch="smoke-$$"
smoke_cleanup() {
  [ -n "${kill_watch:-}" ] && kill "$kill_watch" 2>/dev/null
  "$cluster" down "$scratch" >/dev/null 2>&1
  # Objects the test made in the shared instances.
  kmain delete namespace "$ns" --wait=false >/dev/null 2>&1
  khosted delete clusterversion version --wait=false >/dev/null 2>&1
  rm -rf "$tmp"
}
trap smoke_cleanup EXIT

load_env() { # load_env INSTANCE PREFIX: PREFIX_SERVER, PREFIX_CA, ...
  local k v
  while IFS='=' read -r k v; do
    printf -v "$2_${k#HCP_E2E_}" '%s' "$v"
  done < <("$cluster" env "$1")
}
load_env main M || { echo "main instance not running (e2e/cluster.sh up main hosted)"; echo "0 passed, 1 failed"; exit 1; }
load_env hosted H || { echo "hosted instance not running (e2e/cluster.sh up main hosted)"; echo "0 passed, 1 failed"; exit 1; }

kmain() { kubectl --kubeconfig "$M_KUBECONFIG" "$@"; }
khosted() { kubectl --kubeconfig "$H_KUBECONFIG" "$@"; }

# api_code PREFIX TOKENFILE METHOD PATH [BODY [CONTENT-TYPE]]: the response body
# goes to $tmp/body, the status code to stdout.
api_code() {
  local server ca token
  eval "server=\$$1_SERVER ca=\$$1_CA"
  token=$(cat "$2")
  local args=(-s -o "$tmp/body" -w '%{http_code}' --cacert "$ca" -X "$3"
    -H "Authorization: Bearer $token")
  if [ $# -ge 5 ]; then
    args+=(-H "Content-Type: ${6:-application/json}" --data-binary "$5")
  fi
  curl "${args[@]}" "$server$4"
}
admin() { local p=$1; shift; eval "api_code $p \$${p}_ADMIN_TOKEN_FILE \"\$@\""; }
body_has() { grep -q -- "$1" "$tmp/body"; }
jbody() { jq -r "$1" "$tmp/body" 2>/dev/null; }

ns="hcp-smoke-$$"
hcns="$ns-hc1"

# ---- the instances ---------------------------------------------------------
code=$(admin M GET /readyz)
check_body "main /readyz answers 200" [ "$code" = 200 ]
code=$(admin H GET /readyz)
check_body "hosted /readyz answers 200" [ "$code" = 200 ]
code=$(admin M GET /version)
want_version=$(. "$e2e/lib.sh"; echo "$KUBE_VERSION")
check_body "main serves Kubernetes $want_version (e2e/apiserver/go.mod)" body_has "\"gitVersion\": \"$want_version\""
check_body "kubectl on PATH is the same release" \
  bash -c "kubectl version --client -o json | jq -e '.clientVersion.gitVersion == \"$want_version\"' >/dev/null"
check_body "main and hosted use different ports and etcds" \
  [ "$M_SERVER" != "$H_SERVER" -a "$M_ETCD" != "$H_ETCD" ]
check_body "admin kubeconfig at e2e/.local/kubeconfig (HCP_E2E_STATE_DIR's) works" \
  bash -c "kubectl --kubeconfig '${HCP_E2E_STATE_DIR:-$e2e/.local}/kubeconfig' get --raw /healthz >/dev/null"

# ---- CRDs established --------------------------------------------------------
for crd in hostedclusters.hypershift.openshift.io nodepools.hypershift.openshift.io \
  clusters.cluster.x-k8s.io machinedeployments.cluster.x-k8s.io machinesets.cluster.x-k8s.io \
  hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io; do
  check_body "main CRD $crd Established" \
    test "$(kmain get crd "$crd" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True
done
check_body "hosted CRD clusterversions.config.openshift.io Established" \
  test "$(khosted get crd clusterversions.config.openshift.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True
check_body "the HCMP CRD is served as shipped, CEL rules included" bash -c "
  [ \"\$(yq '[.. | objects | .[\"x-kubernetes-validations\"]? // empty | .[]] | length' '$e2e/../crds/changemanagement.hypershift.openshift.io_hostedchangemanagementpolicies.yaml')\" = \
    \"\$(kubectl --kubeconfig '$M_KUBECONFIG' get crd hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io -o json |
      jq '[.. | objects | .[\"x-kubernetes-validations\"]? // empty | .[]] | length')\" ]"
code=$(admin M GET /apis/cluster.x-k8s.io)
check_body "CAPI serves v1beta2 (preferred) and v1beta1" \
  [ "$(jbody .preferredVersion.version)" = v1beta2 -a "$(jbody '[.versions[].version]|sort|join(",")')" = v1beta1,v1beta2 ]

# ---- HostedCluster -----------------------------------------------------------
kmain create namespace "$ns" >/dev/null
kmain create namespace "$hcns" >/dev/null
code=$(admin M POST "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/hostedclusters" '{
  "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
  "metadata": {"name": "hc1"},
  "spec": {"release": {"image": "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
           "infraID": "hc1-abcde", "platform": {"type": "None"},
           "changeManagement": {"strategy": "ByPolicy", "byPolicy": {"name": "weekends"}},
           "notAHyperShiftField": true}}')
check_body "create HostedCluster (201)" [ "$code" = 201 ]
check_body "HostedCluster prunes spec.changeManagement, as HyperShift's CRD does" [ "$(jbody .spec.changeManagement)" = null ]
check_body "HostedCluster keeps opaque spec.platform" [ "$(jbody .spec.platform.type)" = None ]
check_body "HostedCluster prunes unknown spec fields" [ "$(jbody .spec.notAHyperShiftField)" = null ]
# A merge patch cannot write null (null deletes), and upstream requires the
# nullable completionTime and availableUpdates, so seed the status the way
# HyperShift writes it: whole, here with a JSON patch.
code=$(admin M PATCH "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/hostedclusters/hc1/status" '[
  {"op": "add", "path": "/status", "value": {
    "version": {"desired": {"image": "quay.io/x:4.17.0", "version": "4.17.0"},
      "observedGeneration": 1, "availableUpdates": null,
      "history": [{"state": "Partial", "image": "quay.io/x:4.17.0", "version": "4.17.0",
                   "startedTime": "2026-01-01T00:00:00Z", "completionTime": null, "verified": false}]},
    "conditions": [{"type": "Available", "status": "True", "reason": "AsExpected", "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}]' application/json-patch+json)
check_body "JSON-patch HostedCluster status subresource (200)" [ "$code" = 200 ]
check_body "empty strings survive in custom resources" [ "$(jbody '.status.conditions[0].message')" = "" ]
check_body "HostedCluster status.version.history[0].state reads back" \
  [ "$(jbody '.status.version.history[0].state')" = Partial ]
code=$(admin M PATCH "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/hostedclusters/hc1" \
  '{"status": {"version": null}, "metadata": {"annotations": {"changemanagement.hypershift.openshift.io/strategy": "Restrictive"}}}' \
  application/merge-patch+json)
check_body "status is ignored through the main resource" \
  [ "$code" = 200 -a "$(jbody '.status.version.history[0].state')" = Partial ]
check_body "annotations merge-patch onto HostedCluster" \
  [ "$(jbody '.metadata.annotations["changemanagement.hypershift.openshift.io/strategy"]')" = Restrictive ]
code=$(admin M PATCH "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/hostedclusters/hc1/status" \
  '{"status": {"conditions": [{"type": "ChangesPaused", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' \
  application/merge-patch+json)
check_body "HostedCluster conditions are validated like metav1.Condition (422)" [ "$code" = 422 ]
code=$(admin M PATCH "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/hostedclusters/hc1/status" \
  '{"status": {"conditions": [{"type": "ChangesPaused", "status": "True", "reason": "OutsideWindow", "message": "",
    "lastTransitionTime": "2026-01-01T00:00:00Z"}], "changeManagement": {"current": {"state": "ChangesPaused"}}}}' \
  application/merge-patch+json)
check_body "merge-patch HostedCluster status keeps version, takes conditions, prunes changeManagement" \
  [ "$code" = 200 -a "$(jbody '.status.version.history[0].state')" = Partial -a "$(jbody '.status.conditions|length')" = 1 \
    -a "$(jbody .status.changeManagement)" = null ]

# ---- NodePool -----------------------------------------------------------------
code=$(admin M POST "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/nodepools" '{
  "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
  "metadata": {"name": "np1"},
  "spec": {"clusterName": "hc1", "replicas": 2, "management": {"upgradeType": "Replace"},
           "release": {"image": "quay.io/x:4.17.0"},
           "changeManagement": {"strategy": "PermissiveUntil", "permissiveUntil": "2026-02-01T00:00:00Z"}}}')
check_body "create NodePool (201)" [ "$code" = 201 ]
check_body "NodePool prunes spec.changeManagement, as HyperShift's CRD does" [ "$(jbody .spec.changeManagement)" = null ]
check_body "NodePool management.autoRepair defaults to false" [ "$(jbody .spec.management.autoRepair)" = false ]
code=$(admin M POST "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/nodepools" '{
  "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool", "metadata": {"name": "np2"},
  "spec": {"clusterName": "hc1", "management": {"upgradeType": "Sideways"}, "release": {"image": "x"}}}')
check_body "NodePool rejects an unknown upgradeType (422)" [ "$code" = 422 ]
code=$(admin M PATCH "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/nodepools/np1/status" '{
  "status": {"replicas": 2, "version": "4.16.3", "conditions": [
    {"type": "UpdatingVersion", "status": "True", "reason": "AsExpected", "message": "",
     "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' application/merge-patch+json)
check_body "merge-patch NodePool status subresource (200)" \
  [ "$code" = 200 -a "$(jbody '.status.conditions[0].type')" = UpdatingVersion ]
code=$(admin M GET "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/nodepools/np1/scale")
check_body "NodePool scale subresource" [ "$code" = 200 -a "$(jbody .spec.replicas)" = 2 ]

# ---- CAPI ---------------------------------------------------------------------------
# Cluster API's own CRDs (v1beta2 stored, v1beta1 served through the conversion
# webhook of its core manager) and its admission webhooks; none of its
# controllers act on main (e2e/capi/lib.sh, capi_admission_only).
code=$(admin M POST "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/clusters" '{
  "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "hc1-bare"}, "spec": {}}')
check_body "Cluster API's webhook refuses a Cluster with no control plane or infrastructure (422)" \
  [ "$code" = 422 ] && grep -q 'spec.controlPlaneRef' "$tmp/body"
code=$(admin M POST "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/clusters" '{
  "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "hc1-abcde"},
  "spec": {"controlPlaneRef": {"apiGroup": "hypershift.openshift.io", "kind": "HostedControlPlane", "name": "hc1"}}}')
check_body "create CAPI Cluster v1beta2 (201)" [ "$code" = 201 ]
code=$(admin M PATCH "/apis/cluster.x-k8s.io/v1beta1/namespaces/$hcns/clusters/hc1-abcde" \
  '{"metadata": {"annotations": {"cluster.x-k8s.io/paused": "", "changemanagement.hypershift.openshift.io/paused-by": "hcp-controller"}}}' \
  application/merge-patch+json)
check_body "pause annotation merge-patch through v1beta1, converted (200)" \
  [ "$code" = 200 -a "$(jbody '.apiVersion')" = cluster.x-k8s.io/v1beta1 -a "$(jbody '.metadata.annotations["cluster.x-k8s.io/paused"]')" = "" \
    -a "$(jbody .spec.controlPlaneRef.apiVersion)" = hypershift.openshift.io/v1beta1 ]
check_body "v1beta1 answers with a deprecation warning" \
  bash -c "curl -s -D - -o /dev/null --cacert '$M_CA' -H 'Authorization: Bearer $(cat "$M_ADMIN_TOKEN_FILE")' \
    '$M_SERVER/apis/cluster.x-k8s.io/v1beta1/namespaces/$hcns/clusters/hc1-abcde' | grep -qi '^warning: .*deprecated'"
code=$(admin M POST "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/machinedeployments" '{
  "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
  "metadata": {"name": "np0"}, "spec": {"clusterName": "hc1-abcde", "replicas": 2}}')
check_body "Cluster API's schema refuses a MachineDeployment without a template (422)" \
  [ "$code" = 422 ] && grep -q 'spec.template' "$tmp/body"
code=$(admin M POST "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/machinedeployments" '{
  "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
  "metadata": {"name": "np1", "annotations": {"hypershift.openshift.io/nodePool": "'"$ns"'/np1"}},
  "spec": {"clusterName": "hc1-abcde", "replicas": 2, "selector": {"matchLabels": {"a": "b"}},
           "template": {"metadata": {"labels": {"a": "b"}},
                        "spec": {"clusterName": "hc1-abcde", "version": "4.17.0",
                                 "bootstrap": {"dataSecretName": "user-data-np1"},
                                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                                       "kind": "AWSMachineTemplate", "name": "np1"}}}}}')
check_body "create MachineDeployment v1beta2 (201), its version defaulted by Cluster API's webhook" \
  [ "$code" = 201 -a "$(jbody .spec.template.spec.version)" = v4.17.0 ]
code=$(admin M PATCH "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/machinedeployments/np1/status" \
  '{"status": {"replicas": 2, "upToDateReplicas": 1, "readyReplicas": 2}}' application/merge-patch+json)
check_body "merge-patch MachineDeployment status (v1beta2 upToDateReplicas)" \
  [ "$code" = 200 -a "$(jbody .status.upToDateReplicas)" = 1 ]
code=$(admin M PATCH "/apis/cluster.x-k8s.io/v1beta1/namespaces/$hcns/machinedeployments/np1/status" \
  '{"status": {"updatedReplicas": 1}}' application/merge-patch+json)
check_body "merge-patch MachineDeployment status (v1beta1 updatedReplicas)" \
  [ "$code" = 200 -a "$(jbody .status.updatedReplicas)" = 1 ]
code=$(admin M GET "/apis/cluster.x-k8s.io/v1beta1/namespaces/$hcns/machinedeployments/np1")
check_body "MachineDeployment readable as v1beta1, v1beta2's counters under status.v1beta2" \
  [ "$code" = 200 -a "$(jbody .spec.replicas)" = 2 -a "$(jbody .status.v1beta2.upToDateReplicas)" = 1 ]
code=$(admin M GET "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/machinedeployments/np1")
check_body "v1beta1's counter is stored under status.deprecated.v1beta1" \
  [ "$(jbody .status.deprecated.v1beta1.updatedReplicas)" = 1 -a "$(jbody .status.upToDateReplicas)" = 1 \
    -a "$(jbody .status.updatedReplicas)" = null ]
code=$(admin M POST "/apis/cluster.x-k8s.io/v1beta1/namespaces/$hcns/machinesets" '{
  "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet", "metadata": {"name": "np1-xyz"},
  "spec": {"clusterName": "hc1-abcde", "replicas": 1, "selector": {"matchLabels": {"a": "b"}},
           "template": {"metadata": {"labels": {"a": "b"}},
                        "spec": {"clusterName": "hc1-abcde", "bootstrap": {"dataSecretName": "user-data-np1"},
                                 "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
                                                       "kind": "AWSMachineTemplate", "name": "np1"}}}}}')
check_body "create MachineSet v1beta1 (201)" [ "$code" = 201 ]
code=$(admin M PATCH "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/machinesets/np1-xyz/status" \
  '{"status": {"replicas": 1, "upToDateReplicas": 0}}' application/merge-patch+json)
check_body "merge-patch MachineSet status (200)" [ "$code" = 200 -a "$(jbody .status.upToDateReplicas)" = 0 ]

# ---- server-side apply ----------------------------------------------------------
code=$(admin M PATCH "/apis/cluster.x-k8s.io/v1beta2/namespaces/$hcns/machinedeployments/np1?fieldManager=hcp-controller" \
  'apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: np1
  annotations:
    cluster.x-k8s.io/paused: ""' application/apply-patch+yaml)
check_body "server-side apply on a custom resource (200, managedFields)" \
  [ "$code" = 200 -a "$(jbody '[.metadata.managedFields[].manager]|index("hcp-controller") != null')" = true ]

# ---- HostedChangeManagementPolicy ----------------------------------------------
hcmp="/apis/changemanagement.hypershift.openshift.io/v1alpha1/namespaces/$ns/hostedchangemanagementpolicies"
mkpolicy() { # mkpolicy NAME SPEC-JSON
  admin M POST "$hcmp" '{"apiVersion": "changemanagement.hypershift.openshift.io/v1alpha1",
    "kind": "HostedChangeManagementPolicy", "metadata": {"name": "'"$1"'"}, "spec": '"$2"'}'
}
code=$(mkpolicy weekends '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {
  "timeZone": "Europe/Berlin",
  "permit": {"recurrence": {"frequency": "Monthly", "monthly": {"by": "Day",
    "day": {"days": [{"weekOfMonth": "Last", "dayOfWeek": "Saturday"}], "interval": 2}}},
    "startTime": "22:00", "duration": "1h30m"},
  "exclude": [{"fromDate": "2026-12-24", "untilDate": "2027-01-02", "reason": "holidays"}]}}')
check_body "create a valid MaintenanceSchedule HCMP (201)" [ "$code" = 201 ]
code=$(mkpolicy rrule '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {
  "permit": {"rrule": "FREQ=WEEKLY;BYDAY=SA,SU", "duration": "8h"}}}')
check_body "HCMP defaults timeZone UTC and startTime 00:00" \
  [ "$code" = 201 -a "$(jbody .spec.maintenanceSchedule.timeZone)" = UTC -a "$(jbody .spec.maintenanceSchedule.permit.startTime)" = 00:00 ]
reject() { # reject NAME SPEC-JSON: the API server must refuse the policy
  local code
  code=$(mkpolicy "bad-$RANDOM" "$2")
  if [ "$code" = 422 ]; then ok "HCMP rejects $1 (422)"; else not_ok "HCMP rejects $1" "got $code: $(head -c 300 "$tmp/body")"; fi
}
accept() { # accept NAME SPEC-JSON: the API server must store the policy
  local code
  code=$(mkpolicy "ok-$RANDOM" "$2")
  if [ "$code" = 201 ]; then ok "HCMP accepts $1 (201)"; else not_ok "HCMP accepts $1" "got $code: $(head -c 300 "$tmp/body")"; fi
}
reject "an unknown strategy" '{"strategy": "Sometimes"}'
reject "a missing strategy" '{}'
reject "startTime 24:00" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "startTime": "24:00"}}}'
reject "duration 0h" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "duration": "0h0m"}}}'
accept "a Go duration in seconds" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "duration": "90s"}}}'
accept "a duration as Go clients write it (8h0m0s)" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "duration": "8h0m0s"}}}'
reject "a duration without a unit" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "duration": "90"}}}'
reject "a duration over 8760h" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "duration": "8761h"}}}'
reject "both recurrence and rrule" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "recurrence": {"frequency": "Daily"}}}}'
accept "a permit without recurrence or rrule (every date)" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"startTime": "01:00", "duration": "4h"}}}'
reject "daily interval 731" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Daily", "daily": {"interval": 731}}}}}'
reject "weekly interval 27" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Weekly", "weekly": {"daysOfWeek": ["Monday"], "interval": 27}}}}}'
reject "a duplicate day of the week" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Weekly", "weekly": {"daysOfWeek": ["Monday", "Monday"]}}}}}'
reject "date of month 32" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Monthly", "monthly": {"by": "Date", "date": {"datesOfMonth": [32]}}}}}}'
reject "monthly interval 12" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Monthly", "monthly": {"by": "Date", "date": {"datesOfMonth": [1], "interval": 12}}}}}}'
reject "weekOfMonth Sixth" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Monthly", "monthly": {"by": "Day", "day": {"days": [{"weekOfMonth": "Sixth", "dayOfWeek": "Monday"}]}}}}}}'
reject "month Smarch" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"permit": {"recurrence": {"frequency": "Yearly", "yearly": {"by": "Date", "date": {"datesOfMonth": [1], "month": "Smarch"}}}}}}'
reject "fromDate 2026-13-01" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"exclude": [{"fromDate": "2026-13-01"}]}}'
reject "fromDate 2026-02-30" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"exclude": [{"fromDate": "2026-02-30"}]}}'
reject "an exclusion without fromDate" '{"strategy": "MaintenanceSchedule", "maintenanceSchedule": {"exclude": [{"untilDate": "2026-01-02"}]}}'
code=$(curl -s -o "$tmp/body" -w '%{http_code}' --cacert "$M_CA" \
  -H "Authorization: Bearer $(cat "$M_ADMIN_TOKEN_FILE")" \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$M_SERVER$hcmp")
check_body "HCMP printer columns Strategy, State, Next Change, Age" \
  [ "$(jbody '[.columnDefinitions[] | select(.priority == 0) | .name] | join(",")')" = "Name,Strategy,State,Next Change,Age" ]
code=$(admin M PATCH "$hcmp/weekends/status" '{"status": {"observedGeneration": 1,
  "behavior": {"current": {"state": "ChangesPaused", "startTime": "2026-01-01T00:00:00Z", "endTime": "2026-01-31T22:00:00Z", "reason": "outside the maintenance window"},
               "next": {"state": "ChangesUnpaused", "startTime": "2026-01-31T22:00:00Z", "endTime": "2026-01-31T23:30:00Z"},
               "upcoming": [{"startTime": "2026-01-31T22:00:00Z", "endTime": "2026-01-31T23:30:00Z"}],
               "history": [{"strategy": "MaintenanceSchedule", "state": "ChangesPaused", "startTime": "2026-01-01T00:00:00Z"}]},
  "conditions": [{"type": "Ready", "status": "True", "reason": "Computed", "message": "",
                  "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' application/merge-patch+json)
check_body "merge-patch HCMP status subresource (200)" \
  [ "$code" = 200 -a "$(jbody .status.behavior.next.state)" = ChangesUnpaused ]
check_body "kubectl get hcmp shows the state column" \
  bash -c "kubectl --kubeconfig '$M_KUBECONFIG' -n '$ns' get hcmp weekends --no-headers | grep -q 'MaintenanceSchedule *ChangesPaused *2026-01-31T22:00:00Z'"

# ---- authentication and RBAC ---------------------------------------------------
code=$(api_code M "$M_NOPERM_TOKEN_FILE" GET "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/hostedclusters")
check_body "RBAC denies the no-permission token (403 with the API's message)" \
  [ "$code" = 403 -a "$(jbody .reason)" = Forbidden ] && body_has 'hcp-e2e-noperm'
echo "wrong-token" >"$tmp/badtoken"
code=$(api_code M "$tmp/badtoken" GET /api)
check_body "an unknown token gets 401" [ "$code" = 401 ]
check_body "the admin client certificate authenticates" \
  bash -c "kubectl --kubeconfig '$M_KUBECONFIG_CERT' auth can-i '*' '*' --all-namespaces >/dev/null"
check_body "the wrong CA fails TLS verification" \
  bash -c "! curl -s --cacert '$H_CA' '$M_SERVER/readyz' >/dev/null 2>&1"

# ---- watch -------------------------------------------------------------------------
code=$(admin M GET "/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/nodepools")
rv=$(jbody .metadata.resourceVersion)
curl -s -N --max-time 20 --cacert "$M_CA" -H "Authorization: Bearer $(cat "$M_ADMIN_TOKEN_FILE")" \
  "$M_SERVER/apis/hypershift.openshift.io/v1beta1/namespaces/$ns/nodepools?watch=1&resourceVersion=$rv&allowWatchBookmarks=true" \
  >"$tmp/watch" 2>/dev/null &
kill_watch=$!
sleep 1
kmain -n "$ns" patch nodepool np1 --type merge -p '{"spec": {"replicas": 3}}' >/dev/null
for _ in $(seq 1 50); do grep -q '"MODIFIED"' "$tmp/watch" && break; sleep 0.1; done
kill "$kill_watch" 2>/dev/null; wait "$kill_watch" 2>/dev/null; kill_watch=""
check_body "watch from a list resourceVersion sees MODIFIED" grep -q '"type":"MODIFIED".*"replicas":3' "$tmp/watch"

# ---- the hosted instance is independent ------------------------------------------
check_body "hosted has no HostedCluster API" \
  bash -c "! kubectl --kubeconfig '$H_KUBECONFIG' get crd hostedclusters.hypershift.openshift.io >/dev/null 2>&1"
check_body "main has no ClusterVersion API" \
  bash -c "! kubectl --kubeconfig '$M_KUBECONFIG' get crd clusterversions.config.openshift.io >/dev/null 2>&1"
check_body "main's token is not valid on hosted (401)" [ "$(api_code H "$M_ADMIN_TOKEN_FILE" GET /api)" = 401 ]
khosted delete clusterversion version --ignore-not-found >/dev/null
code=$(admin H POST /apis/config.openshift.io/v1/clusterversions '{
  "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": {"name": "version"},
  "spec": {"clusterID": "0b7c4d46-4f2a-4bd4-9d3c-1c2e3b4a5d6e"}}')
check_body "create ClusterVersion on hosted (201)" [ "$code" = 201 ]
code=$(admin H PATCH /apis/config.openshift.io/v1/clusterversions/version/status '[
  {"op": "add", "path": "/status", "value": {
    "desired": {"image": "quay.io/x:4.17.0", "version": "4.17.0"}, "observedGeneration": 1,
    "versionHash": "abc", "availableUpdates": null,
    "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}]' \
  application/json-patch+json)
check_body "seed ClusterVersion status (200)" [ "$code" = 200 ]
code=$(admin H PATCH /apis/config.openshift.io/v1/clusterversions/version/status '{"status": {
  "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                 {"type": "ChangesPaused", "status": "True", "reason": "OutsideMaintenanceWindow",
                  "message": "changes resume at 2026-01-31T22:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' \
  application/merge-patch+json)
check_body "ClusterVersion status takes the ChangesPaused condition" \
  [ "$code" = 200 -a "$(jbody '.status.conditions[1].type')" = ChangesPaused -a "$(jbody .status.versionHash)" = abc ]

# ---- etcd compaction and apiserver restart (on a scratch instance) --------------------
if "$cluster" up "$scratch" >"$tmp/scratch.log" 2>&1; then
  ok "a third instance ($scratch) starts alongside"
  load_env "$scratch" S
  ks() { kubectl --kubeconfig "$S_KUBECONFIG" "$@"; }
  ks create configmap c1 -n default >/dev/null
  old_rv=$(ks get configmap c1 -n default -o jsonpath='{.metadata.resourceVersion}')
  for i in 1 2 3; do ks label configmap c1 -n default --overwrite "n=$i" >/dev/null; done
  rev=$("$cluster" compact "$scratch")
  check_body "compact prints the compacted revision" [ -n "$rev" ] && [ "$rev" -gt "$old_rv" ]
  if "$cluster" apiserver-restart "$scratch" >"$tmp/restart.log" 2>&1; then
    ok "apiserver-restart brings the apiserver back"
  else
    not_ok "apiserver-restart brings the apiserver back" "$(tail -3 "$tmp/restart.log")"
  fi
  check_body "data survives an apiserver restart" \
    test "$(ks get configmap c1 -n default -o jsonpath='{.metadata.labels.n}')" = 3
  curl -s -N --max-time 5 --cacert "$S_CA" -H "Authorization: Bearer $(cat "$S_ADMIN_TOKEN_FILE")" \
    "$S_SERVER/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$old_rv" >"$tmp/watch410" 2>/dev/null
  check_body "a watch from a compacted resourceVersion gets 410 Gone" \
    grep -q '"type":"ERROR".*"code":410' "$tmp/watch410"
  etcd_pid=$(cat "$S_STATE/etcd.pid")
  "$cluster" down "$scratch" >/dev/null 2>&1
  check_body "down stops the instance's etcd and deletes its state" \
    bash -c "[ ! -d '$S_STATE' ] && { [ ! -d /proc/$etcd_pid ] || grep -q '^State:.*Z' /proc/$etcd_pid/status; }"
else
  not_ok "a third instance ($scratch) starts alongside" "$(tail -5 "$tmp/scratch.log")"
fi

summary
