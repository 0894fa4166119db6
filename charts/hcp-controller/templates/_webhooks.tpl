{{/*
The admission webhooks, one define per entry. Each entry says which
requests the API server sends it: its rules (operations and resource; never
a subresource such as status, and DELETE only for ConfigMaps), its
objectSelector, and its
matchConditions (CEL over object and oldObject, Kubernetes 1.29+): only a
write that changes what the entry answers for is sent. Whatever is not sent
is admitted by the API server itself, so with failurePolicy Fail and every
replica down nothing else is refused (docs/user-guide.md, "When no replica
answers").

Every expression must evaluate without an error for any object (an error
counts as a failed call, which failurePolicy Fail refuses): every field is
tested with has() before it is read, and a missing map or field reads as an
empty list, so that "absent" and "present" compare unequal.

To add an entry: a define named hcp-controller.webhook.<name>, and its
name in one of the two lists of templates/webhook.yaml. Each define gets a
dict: root (the chart's root context), svc (the webhook Service's name) and
ca (the caBundle, empty when the platform injects it).
*/}}

{{/* CEL: annotation KEY of OBJ ("object" or "oldObject") as a list of
zero or one value. Argument: (list OBJ KEY). */}}
{{- define "hcp-controller.cel.ann" -}}
{{- $o := index . 0 }}{{- $k := index . 1 -}}
(has({{ $o }}.metadata.annotations) && '{{ $k }}' in {{ $o }}.metadata.annotations ? [{{ $o }}.metadata.annotations['{{ $k }}']] : [])
{{- end }}

{{/* CEL: field PATH (dotted, under OBJ) as a list of zero or one value.
Argument: (list OBJ PATH). */}}
{{- define "hcp-controller.cel.field" -}}
{{- $o := index . 0 }}{{- $parts := splitList "." (index . 1) }}
{{- $tests := list }}{{- $at := $o }}
{{- range $parts }}{{- $at = printf "%s.%s" $at . }}{{- $tests = append $tests (printf "has(%s)" $at) }}{{- end -}}
({{ join " && " $tests }} ? [{{ $at }}] : [])
{{- end }}

{{/* CEL: annotation or field changed between oldObject and object. */}}
{{- define "hcp-controller.cel.annChanged" -}}
{{ include "hcp-controller.cel.ann" (list "object" .) }} != {{ include "hcp-controller.cel.ann" (list "oldObject" .) }}
{{- end }}
{{- define "hcp-controller.cel.fieldChanged" -}}
{{ include "hcp-controller.cel.field" (list "object" .) }} != {{ include "hcp-controller.cel.field" (list "oldObject" .) }}
{{- end }}

{{/* The changeManagement stanza's annotations (policy/stanza.h). */}}
{{- define "hcp-controller.stanzaKeys" -}}
['changemanagement.hypershift.openshift.io/strategy', 'changemanagement.hypershift.openshift.io/policy', 'changemanagement.hypershift.openshift.io/permissive-until', 'changemanagement.hypershift.openshift.io/restrictive-until']
{{- end }}

{{/* The audit records the HostedCluster and NodePool holds write (decide/audit.h) and
the reason a writer gives: an override (a stanza change) is recorded in the
write that makes it, and a record edited without its change is put back. */}}
{{- define "hcp-controller.auditKeys" -}}
['changemanagement.hypershift.openshift.io/reason', 'changemanagement.hypershift.openshift.io/override-by', 'changemanagement.hypershift.openshift.io/override-at', 'changemanagement.hypershift.openshift.io/override-reason', 'changemanagement.hypershift.openshift.io/requested-by', 'changemanagement.hypershift.openshift.io/requested-at', 'changemanagement.hypershift.openshift.io/requested-reason', 'changemanagement.hypershift.openshift.io/withdrawn-by', 'changemanagement.hypershift.openshift.io/withdrawn-at', 'changemanagement.hypershift.openshift.io/withdrawn']
{{- end }}

{{/* CEL: an update whose old object carries one of the record annotations
KEYS (a CEL list) by a user who is not one of HyperShift's (nor the
controller): a write that may withdraw a held request by what it carries
(DESIGN.md 3.13, pkg/decide/withdraw.h), or is told that the request is
still held. Argument: (list ROOT KEYS). */}}
{{- define "hcp-controller.cel.recordWritten" -}}
{{- $root := index . 0 }}{{- $keys := index . 1 -}}
(has(oldObject.metadata.annotations) && {{ $keys }}.exists(k, k in oldObject.metadata.annotations)
           && !(request.userInfo.username in [{{ range $i, $u := splitList "," (include "hcp-controller.hypershiftUsers" $root) }}{{ if $i }}, {{ end }}'{{ $u }}'{{ end }}]))
{{- end }}

{{/* matchConditions of a validating entry for a HostedCluster or NodePool:
the stanza (annotations or spec.changeManagement) is added, changed or
removed. No objectSelector: an object's first stanza has no opted-in label
yet, and it must be validated. */}}
{{- define "hcp-controller.webhook.stanzaConditions" -}}
- name: stanza-written
  expression: >-
    request.operation == 'CREATE'
    ? ({{ include "hcp-controller.stanzaKeys" . }}.exists(k, has(object.metadata.annotations) && k in object.metadata.annotations)
       || {{ include "hcp-controller.cel.field" (list "object" "spec.changeManagement") }} != [])
    : ({{ include "hcp-controller.stanzaKeys" . }}.exists(k,
         (has(object.metadata.annotations) && k in object.metadata.annotations ? [object.metadata.annotations[k]] : [])
         != (has(oldObject.metadata.annotations) && k in oldObject.metadata.annotations ? [oldObject.metadata.annotations[k]] : []))
       || {{ include "hcp-controller.cel.fieldChanged" "spec.changeManagement" }})
{{- end }}

{{/* Fields common to every entry. Argument: the ctx dict plus "path", and
"failurePolicy" for an entry that does not follow webhook.failurePolicy. */}}
{{- define "hcp-controller.webhook.common" -}}
clientConfig:
  service:
    name: {{ .svc }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- if .ca }}
  caBundle: {{ .ca }}
  {{- end }}
failurePolicy: {{ .failurePolicy | default .root.Values.webhook.failurePolicy }}
sideEffects: None
admissionReviewVersions: ["v1"]
timeoutSeconds: {{ .root.Values.webhook.timeoutSeconds }}
namespaceSelector:
  {{- toYaml .root.Values.webhook.namespaceSelector | nindent 2 }}
{{- end }}

{{/* The HostedCluster fields whose change rolls every NodePool
(decide_hc_held_fields, pkg/decide/slim.c; HyperShift's
docs/content/reference/nodepool-rollouts.md and
hypershift-operator/controllers/nodepool/config.go). */}}
{{- define "hcp-controller.hostedclusterHeldFields" -}}
spec.pullSecret spec.additionalTrustBundle spec.imageContentSources spec.configuration.proxy spec.configuration.image
{{- end }}

{{/* Hold: a HostedCluster's release (spec.release.image,
spec.controlPlaneRelease.image) of an opted-in cluster, its fields that
roll every NodePool, the request the hold of those recorded, and any
update of a cluster that carries a held request by a user other than
HyperShift's (it may withdraw the request, or is told it is still held). */}}
{{- define "hcp-controller.webhook.hold-hostedclusters" -}}
- name: hostedclusters.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/hold/hostedclusters") .) | nindent 2 }}
  rules:
    - apiGroups: ["hypershift.openshift.io"]
      apiVersions: ["*"]
      operations: ["UPDATE"]
      resources: ["hostedclusters"]
      scope: Namespaced
  reinvocationPolicy: Never
  objectSelector:
    {{- toYaml .root.Values.webhook.objectSelector | nindent 4 }}
  matchConditions:
    - name: release-stanza-or-audit-changed
      expression: >-
        {{ include "hcp-controller.cel.fieldChanged" "spec.release.image" }}
        || {{ include "hcp-controller.cel.fieldChanged" "spec.controlPlaneRelease.image" }}
        {{- range $f := splitList " " (include "hcp-controller.hostedclusterHeldFields" .) }}
        || {{ include "hcp-controller.cel.fieldChanged" $f }}
        {{- end }}
        || {{ include "hcp-controller.cel.annChanged" "changemanagement.hypershift.openshift.io/requested-hostedcluster-spec" }}
        || {{ include "hcp-controller.cel.recordWritten" (list .root "['changemanagement.hypershift.openshift.io/requested-release-image', 'changemanagement.hypershift.openshift.io/requested-control-plane-release-image', 'changemanagement.hypershift.openshift.io/requested-hostedcluster-spec']") }}
        || {{ include "hcp-controller.cel.fieldChanged" "spec.changeManagement" }}
        || ({{ include "hcp-controller.stanzaKeys" . }} + {{ include "hcp-controller.auditKeys" . }}).exists(k,
             (has(object.metadata.annotations) && k in object.metadata.annotations ? [object.metadata.annotations[k]] : [])
             != (has(oldObject.metadata.annotations) && k in oldObject.metadata.annotations ? [oldObject.metadata.annotations[k]] : []))
{{- end }}

{{/* The NodePool fields whose change rolls the pool's machines
(decide_np_held_fields, pkg/decide/slim.c; HyperShift's
docs/content/reference/nodepool-rollouts.md). */}}
{{- define "hcp-controller.nodepoolHeldFields" -}}
spec.release spec.config spec.tuningConfig spec.platform.aws.ami spec.platform.aws.instanceType spec.platform.aws.instanceProfile spec.platform.aws.subnet spec.platform.aws.securityGroups spec.platform.aws.rootVolume spec.platform.aws.placement spec.platform.azure spec.platform.kubevirt spec.platform.openstack spec.platform.agent spec.platform.powervs
{{- end }}

{{/* Hold: a NodePool's rollout-triggering fields of an opted-in pool, the
request the hold recorded, its stanza and audit records, and any update of
a pool that carries a held request by a user other than HyperShift's (as
for a HostedCluster). */}}
{{- define "hcp-controller.webhook.hold-nodepools" -}}
- name: nodepools.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/hold/nodepools") .) | nindent 2 }}
  rules:
    - apiGroups: ["hypershift.openshift.io"]
      apiVersions: ["*"]
      operations: ["UPDATE"]
      resources: ["nodepools"]
      scope: Namespaced
  reinvocationPolicy: Never
  objectSelector:
    {{- toYaml .root.Values.webhook.objectSelector | nindent 4 }}
  matchConditions:
    - name: held-field-or-request-changed
      expression: >-
        {{- range $i, $f := splitList " " (include "hcp-controller.nodepoolHeldFields" .) }}
        {{ if $i }}|| {{ end }}{{ include "hcp-controller.cel.fieldChanged" $f }}
        {{- end }}
        || {{ include "hcp-controller.cel.annChanged" "changemanagement.hypershift.openshift.io/requested-nodepool-spec" }}
        || {{ include "hcp-controller.cel.recordWritten" (list .root "['changemanagement.hypershift.openshift.io/requested-nodepool-spec']") }}
        || {{ include "hcp-controller.cel.fieldChanged" "spec.changeManagement" }}
        || ({{ include "hcp-controller.stanzaKeys" . }} + {{ include "hcp-controller.auditKeys" . }}).exists(k,
             (has(object.metadata.annotations) && k in object.metadata.annotations ? [object.metadata.annotations[k]] : [])
             != (has(oldObject.metadata.annotations) && k in oldObject.metadata.annotations ? [oldObject.metadata.annotations[k]] : []))
{{- end }}

{{/* The pause a hold keeps: HyperShift's NodePool reconcile deletes it. */}}
{{- define "hcp-controller.cel.pauseRemoved" -}}
['cluster.x-k8s.io/paused', 'changemanagement.hypershift.openshift.io/paused-by'].exists(k,
  has(oldObject.metadata.annotations) && k in oldObject.metadata.annotations
  && !(has(object.metadata.annotations) && k in object.metadata.annotations))
{{- end }}

{{/* Hold: a MachineDeployment's template of an opted-in pool (Replace),
our pause on it, and a held drift's strategy and record (pkg/decide/drift.h:
HyperShift writes its strategy on every pass; only the passes of a pool
holding a drift are sent). */}}
{{- define "hcp-controller.webhook.hold-machinedeployments" -}}
- name: machinedeployments.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/hold/machinedeployments") .) | nindent 2 }}
  rules:
    - apiGroups: ["cluster.x-k8s.io"]
      apiVersions: ["*"]
      operations: ["UPDATE"]
      resources: ["machinedeployments"]
      scope: Namespaced
  reinvocationPolicy: Never
  objectSelector:
    {{- toYaml .root.Values.webhook.objectSelector | nindent 4 }}
  matchConditions:
    - name: template-changed-or-pause-removed-or-drift-held
      expression: >-
        {{ include "hcp-controller.cel.fieldChanged" "spec.template" }}
        || {{ include "hcp-controller.cel.pauseRemoved" . | nindent 8 }}
        || ({{ include "hcp-controller.cel.ann" (list "oldObject" "changemanagement.hypershift.openshift.io/held-drift") }} != []
            && ({{ include "hcp-controller.cel.fieldChanged" "spec.strategy" }}
                || {{ include "hcp-controller.cel.fieldChanged" "spec.rollout" }}
                || {{ include "hcp-controller.cel.annChanged" "changemanagement.hypershift.openshift.io/held-drift" }}))
{{- end }}

{{/* Hold: a MachineSet's template and target configuration of an
opted-in pool (InPlace), and our pause on it. */}}
{{- define "hcp-controller.webhook.hold-machinesets" -}}
- name: machinesets.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/hold/machinesets") .) | nindent 2 }}
  rules:
    - apiGroups: ["cluster.x-k8s.io"]
      apiVersions: ["*"]
      operations: ["UPDATE"]
      resources: ["machinesets"]
      scope: Namespaced
  reinvocationPolicy: Never
  objectSelector:
    {{- toYaml .root.Values.webhook.objectSelector | nindent 4 }}
  matchConditions:
    - name: template-or-target-changed-or-pause-removed
      expression: >-
        {{ include "hcp-controller.cel.fieldChanged" "spec.template" }}
        || {{ include "hcp-controller.cel.annChanged" "hypershift.openshift.io/nodePoolTargetConfigVersion" }}
        || {{ include "hcp-controller.cel.pauseRemoved" . | nindent 8 }}
{{- end }}

{{/* Hold: the content of a ConfigMap that a restricted NodePool names in
spec.config (HyperShift rolls the pool when it changes; its
docs/content/reference/nodepool-rollouts.md): a change of data or
binaryData, or the deletion, is refused with what to do instead
(pkg/decide/cmhold.h); the answer never patches. The controller keeps the
opted-in label on every ConfigMap an opted-in NodePool names in spec.config
(pkg/controller/cmlabel.c) and removes it when none does, so the
objectSelector sends only those, and matchConditions only their deletions
and writes that change data or binaryData (a metadata-only write is never
sent); the controller answers from its NodePool cache. failurePolicy follows
webhook.failurePolicy like the other holds: with Fail, while no replica
answers, an edit of a named ConfigMap is refused and an unnamed one is
never sent. A ConfigMap named in the same minute it is created may not
carry the label yet: the NodePool write that names it is itself held while
the pool is restricted (the NodePool hold), so HyperShift does not read it
for the pool before the label is there (docs/user-guide.md, "When no
replica answers"). */}}
{{- define "hcp-controller.webhook.hold-configmaps" -}}
- name: configmaps.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/hold/configmaps") .) | nindent 2 }}
  rules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["UPDATE", "DELETE"]
      resources: ["configmaps"]
      scope: Namespaced
  reinvocationPolicy: Never
  objectSelector:
    {{- toYaml .root.Values.webhook.objectSelector | nindent 4 }}
  matchConditions:
    - name: content-changed-or-deleted
      expression: >-
        request.operation == 'DELETE'
        || {{ include "hcp-controller.cel.fieldChanged" "data" }}
        || {{ include "hcp-controller.cel.fieldChanged" "binaryData" }}
{{- end }}

{{/* Validation: a policy created, or its spec changed. Every policy is
ours: no objectSelector. */}}
{{- define "hcp-controller.webhook.validate-hostedchangemanagementpolicies" -}}
- name: validate-hostedchangemanagementpolicies.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/validate/hostedchangemanagementpolicies") .) | nindent 2 }}
  rules:
    - apiGroups: ["changemanagement.hypershift.openshift.io"]
      apiVersions: ["*"]
      operations: ["CREATE", "UPDATE"]
      resources: ["hostedchangemanagementpolicies"]
      scope: Namespaced
  matchConditions:
    - name: spec-written
      expression: >-
        request.operation == 'CREATE'
        || {{ include "hcp-controller.cel.fieldChanged" "spec" }}
{{- end }}

{{/* Validation: a HostedCluster's stanza. */}}
{{- define "hcp-controller.webhook.validate-hostedclusters" -}}
- name: validate-hostedclusters.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/validate/hostedclusters") .) | nindent 2 }}
  rules:
    - apiGroups: ["hypershift.openshift.io"]
      apiVersions: ["*"]
      operations: ["CREATE", "UPDATE"]
      resources: ["hostedclusters"]
      scope: Namespaced
  matchConditions:
    {{- include "hcp-controller.webhook.stanzaConditions" . | nindent 4 }}
{{- end }}

{{/* Validation: a NodePool's stanza. */}}
{{- define "hcp-controller.webhook.validate-nodepools" -}}
- name: validate-nodepools.changemanagement.hypershift.openshift.io
  {{- include "hcp-controller.webhook.common" (merge (dict "path" "/validate/nodepools") .) | nindent 2 }}
  rules:
    - apiGroups: ["hypershift.openshift.io"]
      apiVersions: ["*"]
      operations: ["CREATE", "UPDATE"]
      resources: ["nodepools"]
      scope: Namespaced
  matchConditions:
    {{- include "hcp-controller.webhook.stanzaConditions" . | nindent 4 }}
{{- end }}
