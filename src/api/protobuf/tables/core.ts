// k8s.io/api/core/v1 messages (field numbers from its generated.proto): Namespace, Service, Pod and
// Event, and the pod template the apps kinds embed. PodSpec and Container cover what kubectl and
// ordinary clients set; anything else in them is refused by the decoder, never dropped.
import { message } from '../decode.js';
import { condition, objectMeta } from './meta.js';

const CORE = 'k8s.io.api.core.v1';

// Shared references

export const objectReference = message(`${CORE}.ObjectReference`, {
  1: ['kind', 'string'],
  2: ['namespace', 'string'],
  3: ['name', 'string'],
  4: ['uid', 'string'],
  5: ['apiVersion', 'string'],
  6: ['resourceVersion', 'string'],
  7: ['fieldPath', 'string'],
});

const localObjectReference = message(`${CORE}.LocalObjectReference`, {
  1: ['name', 'string'],
});

// Namespace

const namespaceSpec = message(`${CORE}.NamespaceSpec`, {
  1: ['finalizers', 'string', 'repeated'],
});

const namespaceCondition = message(`${CORE}.NamespaceCondition`, {
  1: ['type', 'string', 'keep'],
  2: ['status', 'string', 'keep'],
  4: ['lastTransitionTime', 'time'],
  5: ['reason', 'string'],
  6: ['message', 'string'],
});

const namespaceStatus = message(`${CORE}.NamespaceStatus`, {
  1: ['phase', 'string'],
  2: ['conditions', namespaceCondition, 'repeated'],
});

export const namespace = message(`${CORE}.Namespace`, {
  1: ['metadata', objectMeta],
  2: ['spec', namespaceSpec],
  3: ['status', namespaceStatus],
});

// Service

const servicePort = message(`${CORE}.ServicePort`, {
  1: ['name', 'string'],
  2: ['protocol', 'string'],
  6: ['appProtocol', 'string', 'keep'],
  3: ['port', 'int32', 'keep'],
  4: ['targetPort', 'intOrString'],
  5: ['nodePort', 'int32'],
});

const clientIPConfig = message(`${CORE}.ClientIPConfig`, {
  1: ['timeoutSeconds', 'int32', 'keep'],
});

const sessionAffinityConfig = message(`${CORE}.SessionAffinityConfig`, {
  1: ['clientIP', clientIPConfig],
});

const serviceSpec = message(`${CORE}.ServiceSpec`, {
  1: ['ports', servicePort, 'repeated'],
  2: ['selector', 'string', 'map'],
  3: ['clusterIP', 'string'],
  18: ['clusterIPs', 'string', 'repeated'],
  4: ['type', 'string'],
  5: ['externalIPs', 'string', 'repeated'],
  7: ['sessionAffinity', 'string'],
  8: ['loadBalancerIP', 'string'],
  9: ['loadBalancerSourceRanges', 'string', 'repeated'],
  10: ['externalName', 'string'],
  11: ['externalTrafficPolicy', 'string'],
  12: ['healthCheckNodePort', 'int32'],
  13: ['publishNotReadyAddresses', 'bool'],
  14: ['sessionAffinityConfig', sessionAffinityConfig],
  19: ['ipFamilies', 'string', 'repeated'],
  17: ['ipFamilyPolicy', 'string', 'keep'],
  20: ['allocateLoadBalancerNodePorts', 'bool', 'keep'],
  21: ['loadBalancerClass', 'string', 'keep'],
  22: ['internalTrafficPolicy', 'string', 'keep'],
  23: ['trafficDistribution', 'string', 'keep'],
});

const portStatus = message(`${CORE}.PortStatus`, {
  1: ['port', 'int32', 'keep'],
  2: ['protocol', 'string', 'keep'],
  3: ['error', 'string', 'keep'],
});

const loadBalancerIngress = message(`${CORE}.LoadBalancerIngress`, {
  1: ['ip', 'string'],
  2: ['hostname', 'string'],
  3: ['ipMode', 'string', 'keep'],
  4: ['ports', portStatus, 'repeated'],
});

const loadBalancerStatus = message(`${CORE}.LoadBalancerStatus`, {
  1: ['ingress', loadBalancerIngress, 'repeated'],
});

const serviceStatus = message(`${CORE}.ServiceStatus`, {
  1: ['loadBalancer', loadBalancerStatus],
  2: ['conditions', condition, 'repeated'],
});

export const service = message(`${CORE}.Service`, {
  1: ['metadata', objectMeta],
  2: ['spec', serviceSpec],
  3: ['status', serviceStatus],
});

// Containers

const containerPort = message(`${CORE}.ContainerPort`, {
  1: ['name', 'string'],
  2: ['hostPort', 'int32'],
  3: ['containerPort', 'int32', 'keep'],
  4: ['protocol', 'string'],
  5: ['hostIP', 'string'],
});

const objectFieldSelector = message(`${CORE}.ObjectFieldSelector`, {
  1: ['apiVersion', 'string'],
  2: ['fieldPath', 'string', 'keep'],
});

const resourceFieldSelector = message(`${CORE}.ResourceFieldSelector`, {
  1: ['containerName', 'string'],
  2: ['resource', 'string', 'keep'],
  3: ['divisor', 'quantity'],
});

const configMapKeySelector = message(`${CORE}.ConfigMapKeySelector`, {
  1: ['localObjectReference', localObjectReference, 'inline'],
  2: ['key', 'string', 'keep'],
  3: ['optional', 'bool', 'keep'],
});

const secretKeySelector = message(`${CORE}.SecretKeySelector`, {
  1: ['localObjectReference', localObjectReference, 'inline'],
  2: ['key', 'string', 'keep'],
  3: ['optional', 'bool', 'keep'],
});

const envVarSource = message(`${CORE}.EnvVarSource`, {
  1: ['fieldRef', objectFieldSelector],
  2: ['resourceFieldRef', resourceFieldSelector],
  3: ['configMapKeyRef', configMapKeySelector],
  4: ['secretKeyRef', secretKeySelector],
});

const envVar = message(`${CORE}.EnvVar`, {
  1: ['name', 'string', 'keep'],
  2: ['value', 'string'],
  3: ['valueFrom', envVarSource],
});

const configMapEnvSource = message(`${CORE}.ConfigMapEnvSource`, {
  1: ['localObjectReference', localObjectReference, 'inline'],
  2: ['optional', 'bool', 'keep'],
});

const secretEnvSource = message(`${CORE}.SecretEnvSource`, {
  1: ['localObjectReference', localObjectReference, 'inline'],
  2: ['optional', 'bool', 'keep'],
});

const envFromSource = message(`${CORE}.EnvFromSource`, {
  1: ['prefix', 'string'],
  2: ['configMapRef', configMapEnvSource],
  3: ['secretRef', secretEnvSource],
});

const resourceClaim = message(`${CORE}.ResourceClaim`, {
  1: ['name', 'string', 'keep'],
  2: ['request', 'string'],
});

const resourceRequirements = message(`${CORE}.ResourceRequirements`, {
  1: ['limits', 'quantity', 'map'],
  2: ['requests', 'quantity', 'map'],
  3: ['claims', resourceClaim, 'repeated'],
});

const containerResizePolicy = message(`${CORE}.ContainerResizePolicy`, {
  1: ['resourceName', 'string', 'keep'],
  2: ['restartPolicy', 'string', 'keep'],
});

const volumeMount = message(`${CORE}.VolumeMount`, {
  1: ['name', 'string', 'keep'],
  2: ['readOnly', 'bool'],
  7: ['recursiveReadOnly', 'string', 'keep'],
  3: ['mountPath', 'string', 'keep'],
  4: ['subPath', 'string'],
  5: ['mountPropagation', 'string', 'keep'],
  6: ['subPathExpr', 'string'],
});

const volumeDevice = message(`${CORE}.VolumeDevice`, {
  1: ['name', 'string', 'keep'],
  2: ['devicePath', 'string', 'keep'],
});

const execAction = message(`${CORE}.ExecAction`, {
  1: ['command', 'string', 'repeated'],
});

const httpHeader = message(`${CORE}.HTTPHeader`, {
  1: ['name', 'string', 'keep'],
  2: ['value', 'string', 'keep'],
});

const httpGetAction = message(`${CORE}.HTTPGetAction`, {
  1: ['path', 'string'],
  2: ['port', 'intOrString'],
  3: ['host', 'string'],
  4: ['scheme', 'string'],
  5: ['httpHeaders', httpHeader, 'repeated'],
});

const tcpSocketAction = message(`${CORE}.TCPSocketAction`, {
  1: ['port', 'intOrString'],
  2: ['host', 'string'],
});

const grpcAction = message(`${CORE}.GRPCAction`, {
  1: ['port', 'int32', 'keep'],
  2: ['service', 'string', 'keep'],
});

const probeHandler = message(`${CORE}.ProbeHandler`, {
  1: ['exec', execAction],
  2: ['httpGet', httpGetAction],
  3: ['tcpSocket', tcpSocketAction],
  4: ['grpc', grpcAction],
});

const probe = message(`${CORE}.Probe`, {
  1: ['handler', probeHandler, 'inline'],
  2: ['initialDelaySeconds', 'int32'],
  3: ['timeoutSeconds', 'int32'],
  4: ['periodSeconds', 'int32'],
  5: ['successThreshold', 'int32'],
  6: ['failureThreshold', 'int32'],
  7: ['terminationGracePeriodSeconds', 'int64', 'keep'],
});

const capabilities = message(`${CORE}.Capabilities`, {
  1: ['add', 'string', 'repeated'],
  2: ['drop', 'string', 'repeated'],
});

const seLinuxOptions = message(`${CORE}.SELinuxOptions`, {
  1: ['user', 'string'],
  2: ['role', 'string'],
  3: ['type', 'string'],
  4: ['level', 'string'],
});

const seccompProfile = message(`${CORE}.SeccompProfile`, {
  1: ['type', 'string', 'keep'],
  2: ['localhostProfile', 'string', 'keep'],
});

const securityContext = message(`${CORE}.SecurityContext`, {
  1: ['capabilities', capabilities],
  2: ['privileged', 'bool', 'keep'],
  3: ['seLinuxOptions', seLinuxOptions],
  4: ['runAsUser', 'int64', 'keep'],
  8: ['runAsGroup', 'int64', 'keep'],
  5: ['runAsNonRoot', 'bool', 'keep'],
  6: ['readOnlyRootFilesystem', 'bool', 'keep'],
  7: ['allowPrivilegeEscalation', 'bool', 'keep'],
  9: ['procMount', 'string', 'keep'],
  11: ['seccompProfile', seccompProfile],
});

export const container = message(`${CORE}.Container`, {
  1: ['name', 'string', 'keep'],
  2: ['image', 'string'],
  3: ['command', 'string', 'repeated'],
  4: ['args', 'string', 'repeated'],
  5: ['workingDir', 'string'],
  6: ['ports', containerPort, 'repeated'],
  19: ['envFrom', envFromSource, 'repeated'],
  7: ['env', envVar, 'repeated'],
  8: ['resources', resourceRequirements],
  23: ['resizePolicy', containerResizePolicy, 'repeated'],
  24: ['restartPolicy', 'string', 'keep'],
  9: ['volumeMounts', volumeMount, 'repeated'],
  21: ['volumeDevices', volumeDevice, 'repeated'],
  10: ['livenessProbe', probe],
  11: ['readinessProbe', probe],
  22: ['startupProbe', probe],
  13: ['terminationMessagePath', 'string'],
  20: ['terminationMessagePolicy', 'string'],
  14: ['imagePullPolicy', 'string'],
  15: ['securityContext', securityContext],
  16: ['stdin', 'bool'],
  17: ['stdinOnce', 'bool'],
  18: ['tty', 'bool'],
});

// Volumes: the common sources.

const hostPathVolumeSource = message(`${CORE}.HostPathVolumeSource`, {
  1: ['path', 'string', 'keep'],
  2: ['type', 'string', 'keep'],
});

const emptyDirVolumeSource = message(`${CORE}.EmptyDirVolumeSource`, {
  1: ['medium', 'string'],
  2: ['sizeLimit', 'quantity'],
});

const secretVolumeSource = message(`${CORE}.SecretVolumeSource`, {
  1: ['secretName', 'string'],
  3: ['defaultMode', 'int32', 'keep'],
  4: ['optional', 'bool', 'keep'],
});

const configMapVolumeSource = message(`${CORE}.ConfigMapVolumeSource`, {
  1: ['localObjectReference', localObjectReference, 'inline'],
  3: ['defaultMode', 'int32', 'keep'],
  4: ['optional', 'bool', 'keep'],
});

const persistentVolumeClaimVolumeSource = message(`${CORE}.PersistentVolumeClaimVolumeSource`, {
  1: ['claimName', 'string', 'keep'],
  2: ['readOnly', 'bool'],
});

const volumeSource = message(`${CORE}.VolumeSource`, {
  1: ['hostPath', hostPathVolumeSource],
  2: ['emptyDir', emptyDirVolumeSource],
  6: ['secret', secretVolumeSource],
  10: ['persistentVolumeClaim', persistentVolumeClaimVolumeSource],
  19: ['configMap', configMapVolumeSource],
});

const volume = message(`${CORE}.Volume`, {
  1: ['name', 'string', 'keep'],
  2: ['volumeSource', volumeSource, 'inline'],
});

// PodSpec

const sysctl = message(`${CORE}.Sysctl`, {
  1: ['name', 'string', 'keep'],
  2: ['value', 'string', 'keep'],
});

const podSecurityContext = message(`${CORE}.PodSecurityContext`, {
  1: ['seLinuxOptions', seLinuxOptions],
  2: ['runAsUser', 'int64', 'keep'],
  6: ['runAsGroup', 'int64', 'keep'],
  3: ['runAsNonRoot', 'bool', 'keep'],
  4: ['supplementalGroups', 'int64', 'repeated'],
  12: ['supplementalGroupsPolicy', 'string', 'keep'],
  5: ['fsGroup', 'int64', 'keep'],
  7: ['sysctls', sysctl, 'repeated'],
  9: ['fsGroupChangePolicy', 'string', 'keep'],
  10: ['seccompProfile', seccompProfile],
  13: ['seLinuxChangePolicy', 'string', 'keep'],
});

const toleration = message(`${CORE}.Toleration`, {
  1: ['key', 'string'],
  2: ['operator', 'string'],
  3: ['value', 'string'],
  4: ['effect', 'string'],
  5: ['tolerationSeconds', 'int64', 'keep'],
});

const hostAlias = message(`${CORE}.HostAlias`, {
  1: ['ip', 'string', 'keep'],
  2: ['hostnames', 'string', 'repeated'],
});

const podDNSConfigOption = message(`${CORE}.PodDNSConfigOption`, {
  1: ['name', 'string'],
  2: ['value', 'string', 'keep'],
});

const podDNSConfig = message(`${CORE}.PodDNSConfig`, {
  1: ['nameservers', 'string', 'repeated'],
  2: ['searches', 'string', 'repeated'],
  3: ['options', podDNSConfigOption, 'repeated'],
});

const podReadinessGate = message(`${CORE}.PodReadinessGate`, {
  1: ['conditionType', 'string', 'keep'],
});

const podOS = message(`${CORE}.PodOS`, {
  1: ['name', 'string', 'keep'],
});

const podSchedulingGate = message(`${CORE}.PodSchedulingGate`, {
  1: ['name', 'string', 'keep'],
});

export const podSpec = message(`${CORE}.PodSpec`, {
  1: ['volumes', volume, 'repeated'],
  20: ['initContainers', container, 'repeated'],
  2: ['containers', container, 'repeated'],
  3: ['restartPolicy', 'string'],
  4: ['terminationGracePeriodSeconds', 'int64', 'keep'],
  5: ['activeDeadlineSeconds', 'int64', 'keep'],
  6: ['dnsPolicy', 'string'],
  7: ['nodeSelector', 'string', 'map'],
  8: ['serviceAccountName', 'string'],
  9: ['serviceAccount', 'string'],
  21: ['automountServiceAccountToken', 'bool', 'keep'],
  10: ['nodeName', 'string'],
  11: ['hostNetwork', 'bool'],
  12: ['hostPID', 'bool'],
  13: ['hostIPC', 'bool'],
  27: ['shareProcessNamespace', 'bool', 'keep'],
  14: ['securityContext', podSecurityContext],
  15: ['imagePullSecrets', localObjectReference, 'repeated'],
  16: ['hostname', 'string'],
  17: ['subdomain', 'string'],
  19: ['schedulerName', 'string'],
  22: ['tolerations', toleration, 'repeated'],
  23: ['hostAliases', hostAlias, 'repeated'],
  24: ['priorityClassName', 'string'],
  25: ['priority', 'int32', 'keep'],
  26: ['dnsConfig', podDNSConfig],
  28: ['readinessGates', podReadinessGate, 'repeated'],
  29: ['runtimeClassName', 'string', 'keep'],
  30: ['enableServiceLinks', 'bool', 'keep'],
  31: ['preemptionPolicy', 'string', 'keep'],
  32: ['overhead', 'quantity', 'map'],
  35: ['setHostnameAsFQDN', 'bool', 'keep'],
  36: ['os', podOS],
  37: ['hostUsers', 'bool', 'keep'],
  38: ['schedulingGates', podSchedulingGate, 'repeated'],
  40: ['resources', resourceRequirements],
  41: ['hostnameOverride', 'string', 'keep'],
});

export const podTemplateSpec = message(`${CORE}.PodTemplateSpec`, {
  1: ['metadata', objectMeta],
  2: ['spec', podSpec],
});

// Pod

const podCondition = message(`${CORE}.PodCondition`, {
  1: ['type', 'string', 'keep'],
  7: ['observedGeneration', 'int64'],
  2: ['status', 'string', 'keep'],
  3: ['lastProbeTime', 'time'],
  4: ['lastTransitionTime', 'time'],
  5: ['reason', 'string'],
  6: ['message', 'string'],
});

const hostIP = message(`${CORE}.HostIP`, { 1: ['ip', 'string', 'keep'] });
const podIP = message(`${CORE}.PodIP`, { 1: ['ip', 'string', 'keep'] });

/** PodStatus without the container statuses, which only the kubelet writes. */
const podStatus = message(`${CORE}.PodStatus`, {
  17: ['observedGeneration', 'int64'],
  1: ['phase', 'string'],
  2: ['conditions', podCondition, 'repeated'],
  3: ['message', 'string'],
  4: ['reason', 'string'],
  11: ['nominatedNodeName', 'string'],
  5: ['hostIP', 'string'],
  16: ['hostIPs', hostIP, 'repeated'],
  6: ['podIP', 'string'],
  12: ['podIPs', podIP, 'repeated'],
  7: ['startTime', 'time'],
  9: ['qosClass', 'string'],
  14: ['resize', 'string'],
});

export const pod = message(`${CORE}.Pod`, {
  1: ['metadata', objectMeta],
  2: ['spec', podSpec],
  3: ['status', podStatus],
});

// Event (core/v1)

export const eventSource = message(`${CORE}.EventSource`, {
  1: ['component', 'string'],
  2: ['host', 'string'],
});

const eventSeries = message(`${CORE}.EventSeries`, {
  1: ['count', 'int32'],
  2: ['lastObservedTime', 'microTime'],
});

export const event = message(`${CORE}.Event`, {
  1: ['metadata', objectMeta],
  2: ['involvedObject', objectReference],
  3: ['reason', 'string'],
  4: ['message', 'string'],
  5: ['source', eventSource],
  6: ['firstTimestamp', 'time'],
  7: ['lastTimestamp', 'time'],
  8: ['count', 'int32'],
  9: ['type', 'string'],
  10: ['eventTime', 'microTime'],
  11: ['series', eventSeries],
  12: ['action', 'string'],
  13: ['related', objectReference],
  14: ['reportingComponent', 'string', 'keep'],
  15: ['reportingInstance', 'string', 'keep'],
});

// ServiceAccount

export const serviceAccount = message(`${CORE}.ServiceAccount`, {
  1: ['metadata', objectMeta],
  2: ['secrets', objectReference, 'repeated'],
  3: ['imagePullSecrets', localObjectReference, 'repeated'],
  4: ['automountServiceAccountToken', 'bool', 'keep'],
});
