{{/* The chart name, or nameOverride. */}}
{{- define "hcp-controller.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object name: fullnameOverride, else the release name when
it already contains the chart name, else <release>-<chart>.
*/}}
{{- define "hcp-controller.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels every object carries. */}}
{{- define "hcp-controller.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "hcp-controller.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: controller
{{- end }}

{{/* Labels that select the controller pods. */}}
{{- define "hcp-controller.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hcp-controller.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The ServiceAccount the controller runs as. */}}
{{- define "hcp-controller.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "hcp-controller.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The users whose writes never withdraw a held request, comma-separated:
webhook.hypershiftUsers and the controller's own ServiceAccount. */}}
{{- define "hcp-controller.hypershiftUsers" -}}
{{- $own := printf "system:serviceaccount:%s:%s" .Release.Namespace (include "hcp-controller.serviceAccountName" .) }}
{{- $users := list }}
{{- range .Values.webhook.hypershiftUsers }}
{{- if not (regexMatch "^[^,'\\\\]+$" .) }}
{{- fail (printf "webhook.hypershiftUsers: %q is not a user name (no commas, quotes or backslashes)" .) }}
{{- end }}
{{- $users = append $users . }}
{{- end }}
{{- append $users $own | uniq | join "," }}
{{- end }}

{{/* The container image reference. */}}
{{- define "hcp-controller.image" -}}
{{- $repo := required "image.repository is required" .Values.image.repository }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repo .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repo (default .Chart.AppVersion .Values.image.tag | toString) }}
{{- end }}
{{- end }}
