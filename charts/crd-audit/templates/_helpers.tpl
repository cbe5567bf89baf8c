{{/* The app's name: nameOverride, else the chart's (crd-audit). */}}
{{- define "crd-audit.name" -}}
{{- default .Chart.Name .Values.nameOverride -}}
{{- end }}

{{/*
The name the chart's objects are named after: fullnameOverride, else the app's name. The
release's name is not part of it: the operator finds its Lease, the gate's Service, Secret
and webhook configuration by this name (passed as CRD_AUDIT_NAME), and the defaults keep the
names every earlier version used (crd-audit), whatever the release is called.
*/}}
{{- define "crd-audit.fullname" -}}
{{- default (include "crd-audit.name" .) .Values.fullnameOverride -}}
{{- end }}

{{/* The labels every object carries: the chart's, then commonLabels (which cannot replace them). */}}
{{- define "crd-audit.labels" -}}
{{- $chart := dict
  "app.kubernetes.io/name" (include "crd-audit.name" .)
  "app.kubernetes.io/instance" .Release.Name
  "app.kubernetes.io/version" .Chart.AppVersion
  "app.kubernetes.io/managed-by" .Release.Service
  "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version) -}}
{{- toYaml (merge $chart (deepCopy (.Values.commonLabels | default dict))) }}
{{- end }}

{{/* The labels of an object of one component (list $ "component"): component last, it wins. */}}
{{- define "crd-audit.componentLabels" -}}
{{- $labels := include "crd-audit.labels" (index . 0) | fromYaml -}}
{{- $_ := set $labels "app.kubernetes.io/component" (index . 1) -}}
{{- toYaml $labels }}
{{- end }}

{{/*
The labels of the Deployment's selector. It cannot change on `helm upgrade` (a Deployment's
selector is immutable), so it stays what it always was; the Job pods carry these labels too,
and are told apart by app.kubernetes.io/component.
*/}}
{{- define "crd-audit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "crd-audit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* What the Services, the PodDisruptionBudget, the NetworkPolicy and the PodMonitor select: the operator's pods, never the hook Jobs'. */}}
{{- define "crd-audit.operatorSelectorLabels" -}}
{{ include "crd-audit.selectorLabels" . }}
app.kubernetes.io/component: operator
{{- end }}

{{/*
A pod's labels: podLabels, commonLabels and the chart's labels, with the component
(operator, uninstall-cleanup, apply-crd) last, so that neither podLabels nor commonLabels can
make a Job's pod look like the operator's. Called with (list $ "component").
*/}}
{{- define "crd-audit.podLabels" -}}
{{- $root := index . 0 -}}
{{- $labels := deepCopy ($root.Values.podLabels | default dict) -}}
{{- $labels = merge (include "crd-audit.labels" $root | fromYaml) $labels -}}
{{- $_ := set $labels "app.kubernetes.io/component" (index . 1) -}}
{{- toYaml $labels }}
{{- end }}

{{/* The ServiceAccount the operator's pods and the uninstall cleanup run as. */}}
{{- define "crd-audit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "crd-audit.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end }}

{{/*
serviceAccount.automount false: no token is mounted automatically (the ServiceAccount and
the pods say so), and the pods mount the same API credentials explicitly instead, as a
projected volume: a bound token kubelet rotates, the cluster's CA and the namespace.
*/}}
{{- define "crd-audit.apiAccessVolume" -}}
- name: kube-api-access
  projected:
    defaultMode: 0444
    sources:
    - serviceAccountToken: {path: token, expirationSeconds: 3607}
    - configMap:
        name: kube-root-ca.crt
        items: [{key: ca.crt, path: ca.crt}]
    - downwardAPI:
        items:
        - path: namespace
          fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}
{{- end }}

{{- define "crd-audit.apiAccessMount" -}}
- {name: kube-api-access, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
{{- end }}

{{/*
What every pod of the chart shares, the Jobs' too: pull secrets, priority, security context,
placement. Called with the root context.
*/}}
{{- define "crd-audit.podPlacement" -}}
automountServiceAccountToken: {{ .Values.serviceAccount.automount }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "crd-audit.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/*
A duration as the operator reads one (a Go duration such as 1h30m or 2500ms, or a number of
seconds), in whole seconds (fractions dropped).
*/}}
{{- define "crd-audit.seconds" -}}
{{- div (include "crd-audit.milliseconds" . | float64 | int64) 1000 -}}
{{- end }}

{{/* The operator configuration file (the ConfigMap's crd-audit.yaml). */}}
{{- define "crd-audit.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $_ := set $config "gate" (include "crd-audit.gateMode" .) -}}
{{- $_ := set $config "gateBudget" .Values.gate.budget -}}
{{- $_ := set $config "gateTimeoutSeconds" .Values.gate.timeoutSeconds -}}
{{- $_ := set $config "gateFailurePolicy" .Values.gate.failurePolicy -}}
{{- with .Values.gate.objectSelector -}}
{{- $_ := set $config "gateObjectSelector" . -}}
{{- end -}}
{{- with .Values.gate.matchConditions -}}
{{- $_ := set $config "gateMatchConditions" . -}}
{{- end -}}
{{- if include "crd-audit.gateCertManager" . -}}
{{- $_ := set $config "gateCertDir" "/etc/crd-audit-gate-tls" -}}
{{- end -}}
{{- $_ := set $config "perCrdMetrics" .Values.metrics.perCrd -}}
{{ toYaml $config }}
{{- end }}

{{- define "crd-audit.validate" -}}
{{- if not (has (include "crd-audit.gateMode" .) (list "off" "warn" "deny")) -}}
{{- fail (printf "gate.mode must be off, warn or deny, not %q" (include "crd-audit.gateMode" .)) -}}
{{- end -}}
{{- if not (has .Values.rbac.mode (list "aggregate" "groups" "all")) -}}
{{- fail (printf "rbac.mode must be aggregate, groups or all, not %q" .Values.rbac.mode) -}}
{{- end -}}
{{- if and (eq .Values.rbac.mode "groups") (not .Values.rbac.groups) -}}
{{- fail "rbac.mode groups needs rbac.groups: the API groups whose custom resources crd-audit reads" -}}
{{- end -}}
{{- $budgetMs := include "crd-audit.milliseconds" .Values.gate.budget | float64 -}}
{{- $maxMs := mul (int .Values.gate.timeoutSeconds) 900 -}}
{{- if or (gt $budgetMs (float64 $maxMs)) (lt $budgetMs 100.0) -}}
{{- fail (printf "gate.budget (%v) must be from 100ms to nine tenths of gate.timeoutSeconds (%vms of %vs): the gate answers before the API server stops waiting" .Values.gate.budget $maxMs .Values.gate.timeoutSeconds) -}}
{{- end -}}
{{- if and .Values.metrics.serviceMonitor.enabled .Values.metrics.podMonitor.enabled -}}
{{- fail "metrics.serviceMonitor and metrics.podMonitor both scrape every replica: enable one of them" -}}
{{- end -}}
{{- end }}

{{/* A duration as the operator reads one (a Go duration or a number of seconds), in milliseconds. */}}
{{- define "crd-audit.milliseconds" -}}
{{- $text := toString . -}}
{{- if regexMatch "^[0-9]+$" $text -}}
{{- mul (int64 $text) 1000 -}}
{{- else -}}
{{- $units := dict "ns" 0.000001 "us" 0.001 "µs" 0.001 "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0 -}}
{{- $total := 0.0 -}}
{{- if not (regexMatch "^([0-9]*[.]?[0-9]+(ns|us|µs|ms|s|m|h))+$" $text) -}}
{{- fail (printf "%q is not a duration (a Go duration such as 8s or 2500ms, or a number of seconds)" $text) -}}
{{- end -}}
{{- range regexFindAll "[0-9]*[.]?[0-9]+(ns|us|µs|ms|s|m|h)" $text -1 -}}
{{- $number := regexFind "^[0-9]*[.]?[0-9]+" . -}}
{{- $total = addf $total (mulf (float64 $number) (index $units (trimPrefix $number .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}
{{- end }}

{{/* The flowcontrol.apiserver.k8s.io version the cluster serves (v1 from 1.29). */}}
{{- define "crd-audit.flowcontrolApiVersion" -}}
{{- if .Capabilities.APIVersions.Has "flowcontrol.apiserver.k8s.io/v1" -}}
flowcontrol.apiserver.k8s.io/v1
{{- else if .Capabilities.APIVersions.Has "flowcontrol.apiserver.k8s.io/v1beta3" -}}
flowcontrol.apiserver.k8s.io/v1beta3
{{- else if .Capabilities.APIVersions.Has "flowcontrol.apiserver.k8s.io/v1beta2" -}}
flowcontrol.apiserver.k8s.io/v1beta2
{{- else -}}
flowcontrol.apiserver.k8s.io/v1beta1
{{- end -}}
{{- end }}

{{/* policy/v1 PodDisruptionBudget from 1.21, policy/v1beta1 before. */}}
{{- define "crd-audit.pdbApiVersion" -}}
{{- if .Capabilities.APIVersions.Has "policy/v1" -}}
policy/v1
{{- else -}}
policy/v1beta1
{{- end -}}
{{- end }}

{{/* "true" when the gate is on and its certificate comes from cert-manager. */}}
{{- define "crd-audit.gateCertManager" -}}
{{- if and .Values.gate.certManager.enabled (ne (include "crd-audit.gateMode" .) "off") -}}
true
{{- end -}}
{{- end }}

{{/* gate.mode as a word: an unquoted `off` in a values file reads as false. */}}
{{- define "crd-audit.gateMode" -}}
{{- $mode := .Values.gate.mode | toString -}}
{{- if eq $mode "false" -}}off{{- else -}}{{ $mode }}{{- end -}}
{{- end }}
