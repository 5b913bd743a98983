{{/* Chart name, overridable. */}}
{{- define "zns-mysql.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: the prefix of every object name. <release>-<chart>, or the release name alone when it
already contains the chart name. Cut to 52 characters so that suffixed names stay within 63.
*/}}
{{- define "zns-mysql.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "zns-mysql.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the operator pods; never change them (Deployment selectors are immutable). */}}
{{- define "zns-mysql.selectorLabels" -}}
app.kubernetes.io/name: {{ include "zns-mysql.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "zns-mysql.labels" -}}
helm.sh/chart: {{ include "zns-mysql.chart" . }}
{{ include "zns-mysql.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: zns-mysql
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "zns-mysql.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "zns-mysql.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false (name an existing ServiceAccount)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* image: "repository:tag" of an image value ({repository, tag}); an empty tag means the appVersion. */}}
{{- define "zns-mysql.image" -}}
{{- $img := index . 0 }}
{{- $root := index . 1 }}
{{- printf "%s:%s" $img.repository (default $root.Chart.AppVersion $img.tag) }}
{{- end }}

{{/* Checks across values that values.schema.json cannot express; each fails with the fix. */}}
{{- define "zns-mysql.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicaCount=%d needs leaderElection.enabled=true: without a leader every replica would reconcile the same objects" (int .Values.replicaCount)) }}
{{- end }}
{{- if and .Values.metrics.enabled (eq (int .Values.metrics.port) (int .Values.healthProbe.port)) }}
{{- fail (printf "metrics.port and healthProbe.port are both %d: the operator cannot bind two servers to one port" (int .Values.metrics.port)) }}
{{- end }}
{{- end }}

{{/* The inventory agent's labels: its own component, so that the operator's selectors never match its pods. */}}
{{- define "zns-mysql.inventorySelectorLabels" -}}
app.kubernetes.io/name: {{ include "zns-mysql.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: inventory
{{- end }}

{{- define "zns-mysql.inventoryLabels" -}}
helm.sh/chart: {{ include "zns-mysql.chart" . }}
{{ include "zns-mysql.inventorySelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: zns-mysql
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
