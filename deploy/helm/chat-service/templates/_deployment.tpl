{{/*
The Deployment of one component, API or worker: dict "root" $ "component" "api"|"worker".
Both run the same image and configuration; SERVICE_ROLE tells them apart.
*/}}
{{- define "chat-service.deployment" -}}
{{- $root := .root }}
{{- $c := get $root.Values .component }}
{{- $ctx := dict "root" $root "component" .component "values" $c }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "chat-service.componentName" $ctx }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "chat-service.componentLabels" $ctx | nindent 4 }}
spec:
  {{- if not $c.autoscaling.enabled }}
  replicas: {{ $c.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      # a new pod is ready before an old one leaves
      maxSurge: 25%
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "chat-service.componentSelectorLabels" $ctx | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "chat-service.componentLabels" $ctx | nindent 8 }}
        {{- with $c.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if include "chat-service.chartCreatesSecret" $root }}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- end }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "chat-service.serviceAccountName" $root }}
      automountServiceAccountToken: {{ $root.Values.serviceAccount.automountServiceAccountToken }}
      enableServiceLinks: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      # above preStopSleepSeconds + the service's drain deadline (10 s): checked by the chart
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      containers:
        - name: chat-service
          image: {{ include "chat-service.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: {{ $root.Values.containerPort }}
              protocol: TCP
          env:
            {{- include "chat-service.env" $ctx | trim | nindent 12 }}
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $root.Values.probes.startup | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          {{- if gt (int $c.preStopSleepSeconds) 0 }}
          lifecycle:
            preStop:
              # still serving while the endpoint leaves the load balancers; SIGTERM (drain) comes after
              exec:
                command: ["sleep", "{{ $c.preStopSleepSeconds }}"]
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            - name: data
              mountPath: /app/data
            {{- if and $root.Values.push.enabled (include "chat-service.runsWorkers" $ctx) }}
            - name: push
              mountPath: {{ include "chat-service.pushDir" $root }}
              readOnly: true
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $root.Values.tmpVolume.sizeLimit }}
        - name: data
          {{- if $root.Values.persistence.enabled }}
          persistentVolumeClaim:
            claimName: {{ default (printf "%s-data" (include "chat-service.fullname" $root)) $root.Values.persistence.existingClaim }}
          {{- else }}
          emptyDir:
            sizeLimit: {{ $root.Values.persistence.emptyDirSizeLimit }}
          {{- end }}
        {{- if and $root.Values.push.enabled (include "chat-service.runsWorkers" $ctx) }}
        - name: push
          secret:
            secretName: {{ include "chat-service.secretName" $root }}
            items:
              - key: {{ $root.Values.push.secretKey }}
                path: {{ $root.Values.push.secretKey }}
        {{- end }}
      {{- with include "chat-service.topologySpread" $ctx | trim }}
      topologySpreadConstraints:
        {{- . | nindent 8 }}
      {{- end }}
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
