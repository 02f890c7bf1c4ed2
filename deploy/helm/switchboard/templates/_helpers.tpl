{{- define "switchboard.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "switchboard.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "switchboard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "switchboard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "switchboard.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "switchboard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ .Values.serviceAccount.name | default (include "switchboard.fullname" .) }}
{{- else -}}
{{ .Values.serviceAccount.name | default "default" }}
{{- end -}}
{{- end -}}

{{/* The environment every container of the release shares. */}}
{{- define "switchboard.env" -}}
- name: SWITCHBOARD_LOG_FORMAT
  value: json
- name: SWITCHBOARD_SHUTDOWN_TIMEOUT
  value: {{ .Values.shutdownTimeout | quote }}
{{- if .Values.config }}
- name: SWITCHBOARD_CONFIG
  value: /etc/switchboard/switchboard.yaml
{{- end }}
{{- range $k, $v := .Values.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end -}}

{{- define "switchboard.validate" -}}
{{- if not .Values.existingSecret -}}
{{- fail "existingSecret: name the Secret that holds DATABASE_URL and SWITCHBOARD_API_TOKEN" -}}
{{- end -}}
{{- if and .Values.slack.socketMode (gt (int .Values.replicaCount) 10) -}}
{{- fail (printf "replicaCount: %d replicas open %d Socket Mode connections; Slack allows 10 per app. Use HTTP events (slack.socketMode: false) or at most 10 replicas" (int .Values.replicaCount) (int .Values.replicaCount)) -}}
{{- end -}}
{{- if lt (int .Values.replicaCount) 1 -}}
{{- fail "replicaCount: at least 1" -}}
{{- end -}}
{{- end -}}
