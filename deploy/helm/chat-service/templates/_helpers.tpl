{{/* Names ----------------------------------------------------------------------------------------- */}}

{{- define "chat-service.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "chat-service.fullname" -}}
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

{{/* <fullname>-<component>, shortened so that the suffix survives the 63-character limit. */}}
{{- define "chat-service.componentName" -}}
{{- $root := .root }}
{{- printf "%s-%s" (include "chat-service.fullname" $root | trunc (int (sub 62 (len .component))) | trimSuffix "-") .component }}
{{- end }}

{{- define "chat-service.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "chat-service.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "chat-service.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Labels ---------------------------------------------------------------------------------------- */}}

{{- define "chat-service.selectorLabels" -}}
app.kubernetes.io/name: {{ include "chat-service.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "chat-service.labels" -}}
helm.sh/chart: {{ include "chat-service.chart" . }}
{{ include "chat-service.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: chat-service
{{- end }}

{{/* dict "root" $ "component" "api"|"worker"|"migrations"|"test" */}}
{{- define "chat-service.componentSelectorLabels" -}}
{{ include "chat-service.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "chat-service.componentLabels" -}}
{{ include "chat-service.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Image ----------------------------------------------------------------------------------------- */}}

{{- define "chat-service.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Secrets --------------------------------------------------------------------------------------- */}}

{{/* The variables the service reads from Secrets: the first three are required. */}}
{{- define "chat-service.requiredSecretVars" -}}
DATABASE_URL REDIS_URL SERVICE_ENCRYPTION_KEY
{{- end }}
{{- define "chat-service.optionalSecretVars" -}}
SERVICE_ADMIN_TOKEN SERVICE_BOOTSTRAP_API_KEY SERVICE_BOOTSTRAP_API_SECRET SERVICE_S3_ACCESS_KEY_ID SERVICE_S3_SECRET_ACCESS_KEY
{{- end }}

{{/* The Secret the chart creates when no existingSecret is given. */}}
{{- define "chat-service.secretName" -}}
{{- default (include "chat-service.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "chat-service.chartCreatesSecret" -}}
{{- if not .Values.secrets.existingSecret }}true{{ end }}
{{- end }}

{{/* Whether a database is configured at all: an existing Secret, a keyRef or a value. */}}
{{- define "chat-service.databaseConfigured" -}}
{{- if or .Values.secrets.existingSecret (hasKey .Values.secrets.keyRefs "DATABASE_URL") .Values.secrets.values.DATABASE_URL }}true{{ end }}
{{- end }}

{{/*
One variable from a Secret: dict "root" $ "name" VAR "required" bool "secretName" NAME-or-empty.
keyRefs win; then the existing Secret (optional variables may be absent from it); then the chart's
Secret, which holds a variable only when it has a value (a required one is referenced anyway, so that
a pod without it fails with "couldn't find key" instead of starting on an embedded database).
*/}}
{{- define "chat-service.secretEnvVar" -}}
{{- $root := .root }}
{{- $name := .name }}
{{- $ref := get $root.Values.secrets.keyRefs $name }}
{{- if $ref }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "secrets.keyRefs.%s.name is required" $name) $ref.name | quote }}
      key: {{ required (printf "secrets.keyRefs.%s.key is required" $name) $ref.key | quote }}
      {{- if not .required }}
      optional: true
      {{- end }}
{{- else if $root.Values.secrets.existingSecret }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.secrets.existingSecret | quote }}
      key: {{ $name }}
      {{- if not .required }}
      optional: true
      {{- end }}
{{- else if or .required (get $root.Values.secrets.values $name) }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ default (include "chat-service.fullname" $root) .secretName | quote }}
      key: {{ $name }}
{{- end }}
{{- end }}

{{/* Environment ----------------------------------------------------------------------------------- */}}

{{/* A value from `config` as the service reads it: integers without an exponent, the rest as written. */}}
{{- define "chat-service.envValue" -}}
{{- if and (kindIs "float64" .) (eq . (float64 (int64 .))) }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{- define "chat-service.baseUrl" -}}
{{- if .Values.config.SERVICE_BASE_URL }}
{{- .Values.config.SERVICE_BASE_URL }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- $host := (first .Values.ingress.hosts).host }}
{{- if $host }}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.ingress.tls) 0)) $host }}
{{- end }}
{{- end }}
{{- end }}

{{/* The SERVICE_ROLE of a component. */}}
{{- define "chat-service.role" -}}
{{- if eq .component "worker" }}worker{{ else if .root.Values.worker.enabled }}api{{ else }}all{{ end }}
{{- end }}

{{/* Where the push service-account JSON is mounted. */}}
{{- define "chat-service.pushDir" -}}/var/run/secrets/chat-service/push{{- end }}

{{/* Whether a component's pods run the queue workers, and so need the push credentials. */}}
{{- define "chat-service.runsWorkers" -}}
{{- if ne (include "chat-service.role" .) "api" }}true{{ end }}
{{- end }}

{{/* The container environment of a component: dict "root" $ "component" NAME "values" .Values.<c> */}}
{{- define "chat-service.env" -}}
{{- $root := .root }}
- name: PORT
  value: {{ $root.Values.containerPort | quote }}
- name: SERVICE_ROLE
  value: {{ include "chat-service.role" . }}
- name: SERVICE_DATA_DIR
  value: /app/data
{{- with include "chat-service.baseUrl" $root }}
- name: SERVICE_BASE_URL
  value: {{ . | quote }}
{{- end }}
{{- range $name, $value := $root.Values.config }}
{{- if and (ne $name "SERVICE_BASE_URL") (not (kindIs "invalid" $value)) (ne (toString $value) "") }}
- name: {{ $name }}
  value: {{ include "chat-service.envValue" $value | quote }}
{{- end }}
{{- end }}
{{- range splitList " " (include "chat-service.requiredSecretVars" $root) }}
{{- include "chat-service.secretEnvVar" (dict "root" $root "name" . "required" true) }}
{{- end }}
{{- range splitList " " (include "chat-service.optionalSecretVars" $root) }}
{{- include "chat-service.secretEnvVar" (dict "root" $root "name" . "required" false) }}
{{- end }}
{{- if and $root.Values.push.enabled (include "chat-service.runsWorkers" .) }}
- name: SERVICE_PUSH_SERVICE_ACCOUNT_FILE
  value: {{ printf "%s/%s" (include "chat-service.pushDir" $root) $root.Values.push.secretKey | quote }}
{{- end }}
{{- with .values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod placement: the component's own constraints, or the chart's default spread. */}}
{{- define "chat-service.topologySpread" -}}
{{- $root := .root }}
{{- if .values.topologySpreadConstraints }}
{{- toYaml .values.topologySpreadConstraints }}
{{- else if $root.Values.topologySpread.enabled }}
{{- range $root.Values.topologySpread.topologyKeys }}
- maxSkew: {{ $root.Values.topologySpread.maxSkew }}
  topologyKey: {{ . }}
  whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
  labelSelector:
    matchLabels:
      {{- include "chat-service.componentSelectorLabels" $ | nindent 6 }}
  matchLabelKeys:
    - pod-template-hash
{{- end }}
{{- end }}
{{- end }}

{{/* Validation: contradictory values stop the install with a message naming them. ----------------- */}}

{{- define "chat-service.validate" -}}
{{- $v := .Values }}
{{- range $component := list "api" "worker" }}
{{- $c := get $v $component }}
{{- if or (eq $component "api") $v.worker.enabled }}
{{- $floor := add (int $c.preStopSleepSeconds) (int (default 0 $v.config.SERVICE_SHUTDOWN_DELAY_SECONDS)) 10 }}
{{- if le (int $c.terminationGracePeriodSeconds) (int $floor) }}
{{- fail (printf "%s.terminationGracePeriodSeconds (%v) must exceed %s.preStopSleepSeconds plus config.SERVICE_SHUTDOWN_DELAY_SECONDS plus the service's 10 s drain deadline (%d)" $component $c.terminationGracePeriodSeconds $component $floor) }}
{{- end }}
{{- if and $c.autoscaling.enabled (gt (int $c.autoscaling.minReplicas) (int $c.autoscaling.maxReplicas)) }}
{{- fail (printf "%s.autoscaling.minReplicas (%v) is above maxReplicas (%v)" $component $c.autoscaling.minReplicas $c.autoscaling.maxReplicas) }}
{{- end }}
{{- if and $c.autoscaling.enabled (not (dig "requests" "cpu" "" $c.resources)) }}
{{- fail (printf "%s.autoscaling needs %s.resources.requests.cpu: utilization is measured against it" $component $component) }}
{{- end }}
{{- if and $c.pdb.enabled (not (kindIs "invalid" $c.pdb.minAvailable)) (not (kindIs "invalid" $c.pdb.maxUnavailable)) }}
{{- fail (printf "%s.pdb: set minAvailable or maxUnavailable, not both (set the other to null)" $component) }}
{{- end }}
{{- end }}
{{- end }}
{{- if $v.secrets.existingSecret }}
{{- range $name, $value := $v.secrets.values }}
{{- if $value }}
{{- fail (printf "secrets.values.%s is set but secrets.existingSecret (%s) is used: put the value in that Secret instead" $name $v.secrets.existingSecret) }}
{{- end }}
{{- end }}
{{- if $v.push.serviceAccountJson }}
{{- fail (printf "push.serviceAccountJson is set but secrets.existingSecret (%s) is used: put the JSON in that Secret under push.secretKey (%s)" $v.secrets.existingSecret $v.push.secretKey) }}
{{- end }}
{{- else }}
{{- if and $v.push.enabled (not $v.push.serviceAccountJson) }}
{{- fail "push.enabled needs push.serviceAccountJson (or secrets.existingSecret holding it under push.secretKey)" }}
{{- end }}
{{- if ne (empty $v.secrets.values.SERVICE_BOOTSTRAP_API_KEY) (empty $v.secrets.values.SERVICE_BOOTSTRAP_API_SECRET) }}
{{- fail "secrets.values.SERVICE_BOOTSTRAP_API_KEY and SERVICE_BOOTSTRAP_API_SECRET must be set together" }}
{{- end }}
{{- end }}
{{- if and (eq (toString $v.config.SERVICE_STORAGE_DRIVER) "s3") (not $v.config.SERVICE_S3_BUCKET) }}
{{- fail "config.SERVICE_STORAGE_DRIVER=s3 needs config.SERVICE_S3_BUCKET" }}
{{- end }}
{{- end }}
