{{/*
The guard rails' file (--guard-config): .Values.guardRails and, with
notification endpoints, `notifications` as the controller reads it
(pkg/notify/config.h), the pre-start `checks` (pkg/check/check.h) and the
release `waves` (pkg/decide/wave.h),
each tokenSecret turned into the tokenFile where it is mounted. Empty when
there is none of them.
*/}}
{{- define "hcp-controller.guardFile" -}}
{{- $doc := deepCopy (.Values.guardRails | default dict) -}}
{{- $n := .Values.notifications -}}
{{- if $n.endpoints -}}
{{- $eps := list -}}
{{- range $i, $ep := $n.endpoints -}}
{{- if not $ep.name }}{{ fail (printf "notifications.endpoints[%d].name: required" $i) }}{{ end -}}
{{- if not $ep.url }}{{ fail (printf "notifications.endpoints[%d].url: required" $i) }}{{ end -}}
{{- $e := dict "name" $ep.name "url" $ep.url -}}
{{- with $ep.format }}{{ $_ := set $e "format" . }}{{ end -}}
{{- with $ep.tokenSecret -}}
{{- if not (and .name .key) }}{{ fail (printf "notifications.endpoints[%d].tokenSecret: needs name and key" $i) }}{{ end -}}
{{- $_ := set $e "tokenFile" (printf "/etc/hcp-controller/notify/%s/%s" $ep.name .key) -}}
{{- end -}}
{{- $eps = append $eps $e -}}
{{- end -}}
{{- $_ := set $doc "notifications" (dict "endpoints" $eps "leads" $n.leads "queueSize" $n.queueSize) -}}
{{- end -}}
{{- if .Values.checks -}}
{{- $cks := list -}}
{{- range $i, $ck := .Values.checks -}}
{{- if not $ck.name }}{{ fail (printf "checks[%d].name: required" $i) }}{{ end -}}
{{- if not $ck.url }}{{ fail (printf "checks[%d].url: required" $i) }}{{ end -}}
{{- $c := omit $ck "tokenSecret" -}}
{{- with $ck.tokenSecret -}}
{{- if not (and .name .key) }}{{ fail (printf "checks[%d].tokenSecret: needs name and key" $i) }}{{ end -}}
{{- $_ := set $c "tokenFile" (printf "/etc/hcp-controller/checks/%s/%s" $ck.name .key) -}}
{{- end -}}
{{- $cks = append $cks $c -}}
{{- end -}}
{{- $_ := set $doc "checks" $cks -}}
{{- end -}}
{{- $w := deepCopy (.Values.waves | default dict) -}}
{{- if not $w.sequence }}{{ $w = omit $w "sequence" }}{{ end -}}
{{- if not $w.blockedReleases }}{{ $w = omit $w "blockedReleases" }}{{ end -}}
{{- if not (and $w.evidence $w.evidence.name) }}{{ $w = omit $w "evidence" }}{{ else if not $w.evidence.namespace }}{{ $_ := set $w.evidence "namespace" .Release.Namespace }}{{ end -}}
{{- if $w }}{{ $_ := set $doc "waves" $w }}{{ end -}}
{{- if $doc }}{{ toYaml $doc }}{{ end -}}
{{- end -}}

{{/* The mounts of the endpoints' and checks' token Secrets (volumeMounts items). */}}
{{- define "hcp-controller.notifyMounts" -}}
{{- range .Values.notifications.endpoints }}
{{- if .tokenSecret }}
- name: notify-{{ .name }}
  mountPath: /etc/hcp-controller/notify/{{ .name }}
  readOnly: true
{{- end }}
{{- end }}
{{- range .Values.checks }}
{{- if .tokenSecret }}
- name: check-{{ .name }}
  mountPath: /etc/hcp-controller/checks/{{ .name }}
  readOnly: true
{{- end }}
{{- end }}
{{- end -}}

{{/* The endpoints' and checks' token Secrets (volumes items): the one key only. */}}
{{- define "hcp-controller.notifyVolumes" -}}
{{- range .Values.notifications.endpoints }}
{{- if .tokenSecret }}
- name: notify-{{ .name }}
  secret:
    secretName: {{ .tokenSecret.name }}
    items:
      - key: {{ .tokenSecret.key }}
        path: {{ .tokenSecret.key }}
{{- end }}
{{- end }}
{{- range .Values.checks }}
{{- if .tokenSecret }}
- name: check-{{ .name }}
  secret:
    secretName: {{ .tokenSecret.name }}
    items:
      - key: {{ .tokenSecret.key }}
        path: {{ .tokenSecret.key }}
{{- end }}
{{- end }}
{{- end -}}
