{{/* The labels every object carries. */}}
{{- define "crd-audit.labels" -}}
app.kubernetes.io/name: crd-audit
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The labels that select the operator's pods. */}}
{{- define "crd-audit.selectorLabels" -}}
app.kubernetes.io/name: crd-audit
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "crd-audit.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* The operator configuration file (the ConfigMap's crd-audit.yaml). */}}
{{- define "crd-audit.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $_ := set $config "gate" (include "crd-audit.gateMode" .) -}}
{{- $_ := set $config "gateBudget" .Values.gate.budget -}}
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
