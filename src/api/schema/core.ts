// Core group (v1) kinds: Namespace, Node, Pod, Service, Endpoints and Event, and the pod template
// pieces apps/v1 Deployment reuses. Field names, types and list semantics follow Kubernetes v1.33;
// the descriptions are our own.
import {
  atomicList,
  atomicStrings,
  bool,
  enumOf,
  field,
  free,
  int32,
  int64,
  intOrString,
  keyedList,
  microTime,
  named,
  quantity,
  quantityMap,
  setList,
  str,
  strMap,
  time,
  always,
} from './build.js';
import { condition, conditions, kindSchema, labelSelector, objectMeta } from './meta.js';
import type { Schema } from './schema.js';

const CORE = 'io.k8s.api.core.v1';

// ---------------------------------------------------------------------------------------------------
// Small shared types

export const objectReference: Schema = named(
  `${CORE}.ObjectReference`,
  {
    kind: str('Kind of the referent.'),
    namespace: str('Namespace of the referent.'),
    name: str('Name of the referent.'),
    uid: str('UID of the referent.'),
    apiVersion: str('API version of the referent.'),
    resourceVersion: str('Specific resourceVersion of the referent, if any.'),
    fieldPath: str('Part of the referent this reference points at, such as `spec.containers{name}`.'),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

export const localObjectReference: Schema = named(
  `${CORE}.LocalObjectReference`,
  { name: str('Name of the referent, in the same namespace.', { default: '' }) },
  { 'x-kubernetes-map-type': 'atomic' },
);

const protocol = (description = 'Network protocol: TCP, UDP or SCTP. Defaults to TCP.'): Schema =>
  enumOf(['SCTP', 'TCP', 'UDP'], description, { default: 'TCP' });

const keyToPath: Schema = named(
  `${CORE}.KeyToPath`,
  {
    key: str('Key to project.'),
    path: str('Relative path of the file the key is written to.'),
    mode: int32('Permission bits of the file.'),
  },
  { required: ['key', 'path'] },
);

const objectFieldSelector: Schema = named(
  `${CORE}.ObjectFieldSelector`,
  {
    apiVersion: str('Schema version the field path is written in; defaults to v1.'),
    fieldPath: str('Path of the field to select.'),
  },
  { required: ['fieldPath'], 'x-kubernetes-map-type': 'atomic' },
);

const resourceFieldSelector: Schema = named(
  `${CORE}.ResourceFieldSelector`,
  {
    containerName: str('Container whose resources are read; required for volumes.'),
    resource: str('Resource to select, such as limits.cpu.'),
    divisor: quantity('Unit the value is expressed in; defaults to 1.'),
  },
  { required: ['resource'], 'x-kubernetes-map-type': 'atomic' },
);

const keySelector = (name: string, what: string): Schema =>
  named(
    `${CORE}.${name}`,
    {
      key: str(`Key of the ${what} to select.`),
      name: str(`Name of the ${what}.`, { default: '' }),
      optional: bool(`Whether the ${what} or its key may be missing.`),
    },
    { required: ['key'], 'x-kubernetes-map-type': 'atomic' },
  );

// ---------------------------------------------------------------------------------------------------
// Containers

const envVar: Schema = named(
  `${CORE}.EnvVar`,
  {
    name: str('Name of the environment variable.'),
    value: str('Literal value; `$(VAR)` references to earlier variables are expanded.'),
    valueFrom: named(`${CORE}.EnvVarSource`, {
      fieldRef: field(objectFieldSelector, 'A field of the pod.'),
      resourceFieldRef: field(resourceFieldSelector, 'A resource limit or request of a container.'),
      configMapKeyRef: field(keySelector('ConfigMapKeySelector', 'ConfigMap'), 'A key of a ConfigMap.'),
      secretKeyRef: field(keySelector('SecretKeySelector', 'Secret'), 'A key of a Secret.'),
    }),
  },
  { required: ['name'] },
);

const envFromSource: Schema = named(`${CORE}.EnvFromSource`, {
  prefix: str('Prefix added to every variable name.'),
  configMapRef: named(
    `${CORE}.ConfigMapEnvSource`,
    { name: str('Name of the ConfigMap.', { default: '' }), optional: bool('Whether it may be missing.') },
    { description: 'ConfigMap whose keys become variables.' },
  ),
  secretRef: named(
    `${CORE}.SecretEnvSource`,
    { name: str('Name of the Secret.', { default: '' }), optional: bool('Whether it may be missing.') },
    { description: 'Secret whose keys become variables.' },
  ),
});

const containerPort: Schema = named(
  `${CORE}.ContainerPort`,
  {
    name: str('IANA_SVC_NAME for the port, unique within the pod; services may refer to it.'),
    hostPort: int32('Port to expose on the host; rarely needed.'),
    containerPort: int32('Port number on the pod IP address.'),
    protocol: protocol(),
    hostIP: str('Host IP address to bind the host port to.'),
  },
  { required: ['containerPort'] },
);

const volumeMount: Schema = named(
  `${CORE}.VolumeMount`,
  {
    name: str('Name of the volume to mount.'),
    readOnly: bool('Mount read-only.'),
    recursiveReadOnly: str(
      'Whether read-only mounts are read-only recursively: Disabled, IfPossible or Enabled.',
    ),
    mountPath: str('Path inside the container.'),
    subPath: str('Sub-path of the volume to mount instead of its root.'),
    mountPropagation: str(
      'How mounts propagate between host and container: None, HostToContainer or Bidirectional.',
    ),
    subPathExpr: str('Like subPath, with `$(VAR)` expansion from the container environment.'),
  },
  { required: ['name', 'mountPath'] },
);

const volumeDevice: Schema = named(
  `${CORE}.VolumeDevice`,
  {
    name: str('Name of a persistentVolumeClaim volume of the pod.'),
    devicePath: str('Path inside the container the device is mapped to.'),
  },
  { required: ['name', 'devicePath'] },
);

const resourceRequirements: Schema = named(`${CORE}.ResourceRequirements`, {
  limits: quantityMap('Maximum amount of each compute resource allowed.'),
  requests: quantityMap('Minimum amount of each compute resource required; used for scheduling.'),
  claims: keyedList(
    named(
      `${CORE}.ResourceClaim`,
      {
        name: str('Name of an entry in pod.spec.resourceClaims.'),
        request: str('Name of one request within the claim.'),
      },
      { required: ['name'] },
    ),
    ['name'],
    'Dynamically allocated resources (from spec.resourceClaims) used by this container.',
    null,
  ),
});

const execAction: Schema = named(`${CORE}.ExecAction`, {
  command: atomicStrings('Command line run inside the container; not run through a shell.'),
});

const httpGetAction: Schema = named(
  `${CORE}.HTTPGetAction`,
  {
    path: str('Path to request.'),
    port: intOrString('Port number or name to connect to.'),
    host: str('Host to connect to; defaults to the pod IP.'),
    scheme: enumOf(['HTTP', 'HTTPS'], 'Scheme to connect with; defaults to HTTP.'),
    httpHeaders: atomicList(
      named(
        `${CORE}.HTTPHeader`,
        { name: str('Header name.'), value: str('Header value.') },
        { required: ['name', 'value'] },
      ),
      'Extra request headers.',
    ),
  },
  { required: ['port'] },
);

const tcpSocketAction: Schema = named(
  `${CORE}.TCPSocketAction`,
  {
    port: intOrString('Port number or name to connect to.'),
    host: str('Host to connect to; defaults to the pod IP.'),
  },
  { required: ['port'] },
);

const probe: Schema = named(`${CORE}.Probe`, {
  exec: field(execAction, 'Run a command; exit status 0 means healthy.'),
  httpGet: field(httpGetAction, 'Send an HTTP GET; a 2xx or 3xx status means healthy.'),
  tcpSocket: field(tcpSocketAction, 'Open a TCP connection.'),
  grpc: named(
    `${CORE}.GRPCAction`,
    {
      port: int32('Port of the gRPC service.'),
      service: str('Service name sent in the gRPC health check request.', { default: '' }),
    },
    { required: ['port'], description: 'Call the gRPC health checking protocol.' },
  ),
  initialDelaySeconds: int32('Seconds after the container starts before the first probe.'),
  timeoutSeconds: int32('Seconds after which a probe attempt times out. Defaults to 1.'),
  periodSeconds: int32('Seconds between probes. Defaults to 10.'),
  successThreshold: int32('Consecutive successes needed after a failure. Defaults to 1.'),
  failureThreshold: int32('Consecutive failures before giving up. Defaults to 3.'),
  terminationGracePeriodSeconds: int64('Grace period used when a failing probe kills the container.'),
});

const lifecycleHandler: Schema = named(`${CORE}.LifecycleHandler`, {
  exec: field(execAction, 'Run a command in the container.'),
  httpGet: field(httpGetAction, 'Send an HTTP GET.'),
  tcpSocket: field(tcpSocketAction, 'Deprecated; kept for compatibility.'),
  sleep: named(
    `${CORE}.SleepAction`,
    { seconds: int64('Seconds to sleep.') },
    { required: ['seconds'], description: 'Sleep for a while.' },
  ),
});

const seLinuxOptions: Schema = named(`${CORE}.SELinuxOptions`, {
  user: str('SELinux user label.'),
  role: str('SELinux role label.'),
  type: str('SELinux type label.'),
  level: str('SELinux level label.'),
});

const windowsOptions: Schema = named(`${CORE}.WindowsSecurityContextOptions`, {
  gmsaCredentialSpecName: str('Name of the GMSA credential spec to use.'),
  gmsaCredentialSpec: str('Inlined GMSA credential spec.'),
  runAsUserName: str('User name to run the entrypoint as.'),
  hostProcess: bool('Run as a Windows HostProcess container.'),
});

const seccompProfile: Schema = named(
  `${CORE}.SeccompProfile`,
  {
    type: str('RuntimeDefault, Unconfined or Localhost.'),
    localhostProfile: str('Profile file on the node, for type Localhost.'),
  },
  { required: ['type'] },
);

const appArmorProfile: Schema = named(
  `${CORE}.AppArmorProfile`,
  {
    type: str('RuntimeDefault, Unconfined or Localhost.'),
    localhostProfile: str('Profile loaded on the node, for type Localhost.'),
  },
  { required: ['type'] },
);

const securityContext: Schema = named(`${CORE}.SecurityContext`, {
  capabilities: named(`${CORE}.Capabilities`, {
    add: atomicStrings('Capabilities to add.'),
    drop: atomicStrings('Capabilities to drop.'),
  }),
  privileged: bool('Run the container privileged.'),
  seLinuxOptions: field(seLinuxOptions, 'SELinux context of the container.'),
  windowsOptions: field(windowsOptions, 'Windows-specific settings.'),
  runAsUser: int64('UID the entrypoint runs as.'),
  runAsGroup: int64('GID the entrypoint runs as.'),
  runAsNonRoot: bool('Refuse to start if the image would run as UID 0.'),
  readOnlyRootFilesystem: bool('Mount the root filesystem read-only.'),
  allowPrivilegeEscalation: bool('Whether a process may gain more privileges than its parent.'),
  procMount: str('Default or Unmasked /proc mount.'),
  seccompProfile: field(seccompProfile, 'Seccomp options.'),
  appArmorProfile: field(appArmorProfile, 'AppArmor options.'),
});

const containerFields = (): Record<string, Schema> => ({
  name: str('Name of the container, unique within the pod.'),
  image: str('Container image reference.'),
  command: atomicStrings('Entrypoint, replacing the image ENTRYPOINT.'),
  args: atomicStrings('Arguments to the entrypoint, replacing the image CMD.'),
  workingDir: str('Working directory of the entrypoint.'),
  ports: keyedList(
    containerPort,
    ['containerPort', 'protocol'],
    'Ports the container exposes (informational).',
  ),
  envFrom: atomicList(envFromSource, 'Sources whose keys all become environment variables.'),
  env: keyedList(envVar, ['name'], 'Environment variables of the container.'),
  resources: always(field(resourceRequirements, 'Compute resources the container needs.')),
  resizePolicy: atomicList(
    named(
      `${CORE}.ContainerResizePolicy`,
      {
        resourceName: str('Resource the policy applies to: cpu or memory.'),
        restartPolicy: str('NotRequired or RestartContainer.'),
      },
      { required: ['resourceName', 'restartPolicy'] },
    ),
    'How the container reacts to in-place resource changes.',
  ),
  restartPolicy: str('Per-container restart policy; only Always, for sidecar init containers.'),
  volumeMounts: keyedList(volumeMount, ['mountPath'], 'Volumes mounted into the container filesystem.'),
  volumeDevices: keyedList(volumeDevice, ['devicePath'], 'Block devices mapped into the container.'),
  livenessProbe: field(probe, 'The container is restarted when this probe fails.'),
  readinessProbe: field(probe, 'The pod stops receiving service traffic while this probe fails.'),
  startupProbe: field(probe, 'Other probes wait until this one succeeds once.'),
  lifecycle: named(
    `${CORE}.Lifecycle`,
    {
      postStart: field(lifecycleHandler, 'Run right after the container starts.'),
      preStop: field(lifecycleHandler, 'Run before the container is stopped.'),
      stopSignal: str('Signal used to stop the container.'),
    },
    { description: 'Actions taken on container lifecycle events.' },
  ),
  terminationMessagePath: str('File whose contents become the termination message.'),
  terminationMessagePolicy: enumOf(
    ['FallbackToLogsOnError', 'File'],
    'Where the termination message comes from.',
  ),
  imagePullPolicy: enumOf(['Always', 'IfNotPresent', 'Never'], 'When to pull the image.'),
  securityContext: field(securityContext, 'Security options of the container.'),
  stdin: bool('Allocate a stdin buffer.'),
  stdinOnce: bool('Close stdin after the first attach disconnects.'),
  tty: bool('Allocate a TTY.'),
});

export const container: Schema = named(`${CORE}.Container`, containerFields(), { required: ['name'] });

const ephemeralContainer: Schema = named(
  `${CORE}.EphemeralContainer`,
  {
    ...containerFields(),
    targetContainerName: str('Container whose namespaces this debugging container joins.'),
  },
  { required: ['name'] },
);

// ---------------------------------------------------------------------------------------------------
// Volumes

const downwardAPIVolumeFile: Schema = named(
  `${CORE}.DownwardAPIVolumeFile`,
  {
    path: str('Relative path of the file.'),
    fieldRef: field(objectFieldSelector, 'A pod field to write.'),
    resourceFieldRef: field(resourceFieldSelector, 'A container resource to write.'),
    mode: int32('Permission bits of the file.'),
  },
  { required: ['path'] },
);

const projectedItems = (what: string): Record<string, Schema> => ({
  name: str(`Name of the ${what}.`, { default: '' }),
  items: atomicList(keyToPath, 'Keys to project, and where; all keys when empty.'),
  optional: bool(`Whether the ${what} may be missing.`),
});

const volumeProjection: Schema = named(`${CORE}.VolumeProjection`, {
  secret: named(`${CORE}.SecretProjection`, projectedItems('Secret'), { description: 'Project a Secret.' }),
  configMap: named(`${CORE}.ConfigMapProjection`, projectedItems('ConfigMap'), {
    description: 'Project a ConfigMap.',
  }),
  downwardAPI: named(
    `${CORE}.DownwardAPIProjection`,
    { items: atomicList(downwardAPIVolumeFile, 'Files to write.') },
    { description: 'Project pod information.' },
  ),
  serviceAccountToken: named(
    `${CORE}.ServiceAccountTokenProjection`,
    {
      audience: str('Intended audience of the token.'),
      expirationSeconds: int64('Requested lifetime of the token.'),
      path: str('Relative path of the token file.'),
    },
    { required: ['path'], description: 'Project a service account token.' },
  ),
  clusterTrustBundle: free('Project a ClusterTrustBundle.'),
  podCertificate: free('Project a pod certificate.'),
});

const volumeFields: Record<string, Schema> = {
  name: str('Name of the volume, unique within the pod; containers mount it by this name.'),
  hostPath: named(
    `${CORE}.HostPathVolumeSource`,
    {
      path: str('Path on the host.'),
      type: str('Expected type of the path: DirectoryOrCreate, Directory, File, Socket and so on.'),
    },
    { required: ['path'], description: 'A file or directory of the host.' },
  ),
  emptyDir: named(
    `${CORE}.EmptyDirVolumeSource`,
    {
      medium: str('Storage medium: empty for the node default, or Memory.'),
      sizeLimit: quantity('Upper bound on the size of the directory.'),
    },
    { description: 'A scratch directory that lives as long as the pod.' },
  ),
  secret: named(
    `${CORE}.SecretVolumeSource`,
    {
      secretName: str('Name of the Secret.'),
      items: atomicList(keyToPath, 'Keys to project, and where; all keys when empty.'),
      defaultMode: int32('Permission bits of the files.'),
      optional: bool('Whether the Secret may be missing.'),
    },
    { description: 'The keys of a Secret as files.' },
  ),
  configMap: named(
    `${CORE}.ConfigMapVolumeSource`,
    {
      name: str('Name of the ConfigMap.', { default: '' }),
      items: atomicList(keyToPath, 'Keys to project, and where; all keys when empty.'),
      defaultMode: int32('Permission bits of the files.'),
      optional: bool('Whether the ConfigMap may be missing.'),
    },
    { 'x-kubernetes-map-type': 'atomic', description: 'The keys of a ConfigMap as files.' },
  ),
  persistentVolumeClaim: named(
    `${CORE}.PersistentVolumeClaimVolumeSource`,
    { claimName: str('Name of the claim, in the pod namespace.'), readOnly: bool('Mount read-only.') },
    { required: ['claimName'], description: 'A PersistentVolumeClaim.' },
  ),
  projected: named(
    `${CORE}.ProjectedVolumeSource`,
    {
      sources: atomicList(volumeProjection, 'What to project.'),
      defaultMode: int32('Permission bits of the files.'),
    },
    { description: 'Several sources projected into one directory.' },
  ),
  downwardAPI: named(
    `${CORE}.DownwardAPIVolumeSource`,
    {
      items: atomicList(downwardAPIVolumeFile, 'Files to write.'),
      defaultMode: int32('Permission bits of the files.'),
    },
    { description: 'Pod information as files.' },
  ),
  nfs: named(
    `${CORE}.NFSVolumeSource`,
    {
      server: str('NFS server host name or IP.'),
      path: str('Exported path.'),
      readOnly: bool('Mount read-only.'),
    },
    { required: ['server', 'path'], description: 'An NFS export.' },
  ),
  csi: named(
    `${CORE}.CSIVolumeSource`,
    {
      driver: str('Name of the CSI driver.'),
      readOnly: bool('Mount read-only.'),
      fsType: str('Filesystem type to mount.'),
      volumeAttributes: strMap('Driver-specific attributes.'),
      nodePublishSecretRef: field(localObjectReference, 'Secret passed to the driver.'),
    },
    { required: ['driver'], description: 'An ephemeral volume provided by a CSI driver.' },
  ),
  image: named(
    `${CORE}.ImageVolumeSource`,
    {
      reference: str('Image or artifact reference.'),
      pullPolicy: enumOf(['Always', 'IfNotPresent', 'Never'], 'When to pull the image.'),
    },
    { description: 'The content of an OCI image.' },
  ),
  ephemeral: free('A volume backed by a PersistentVolumeClaim created for, and deleted with, the pod.'),
};
for (const source of [
  'awsElasticBlockStore',
  'azureDisk',
  'azureFile',
  'cephfs',
  'cinder',
  'fc',
  'flexVolume',
  'flocker',
  'gcePersistentDisk',
  'gitRepo',
  'glusterfs',
  'iscsi',
  'photonPersistentDisk',
  'portworxVolume',
  'quobyte',
  'rbd',
  'scaleIO',
  'storageos',
  'vsphereVolume',
])
  volumeFields[source] = free(`A ${source} volume (legacy in-tree plugin).`);

const volume: Schema = named(`${CORE}.Volume`, volumeFields, { required: ['name'] });

// ---------------------------------------------------------------------------------------------------
// Scheduling

const nodeSelectorRequirement: Schema = named(
  `${CORE}.NodeSelectorRequirement`,
  {
    key: str('Label (or field) key.'),
    operator: enumOf(
      ['DoesNotExist', 'Exists', 'Gt', 'In', 'Lt', 'NotIn'],
      'How the key relates to the values.',
    ),
    values: atomicStrings('Values to compare with.'),
  },
  { required: ['key', 'operator'] },
);

const nodeSelectorTerm: Schema = named(
  `${CORE}.NodeSelectorTerm`,
  {
    matchExpressions: atomicList(nodeSelectorRequirement, 'Requirements on node labels.'),
    matchFields: atomicList(nodeSelectorRequirement, 'Requirements on node fields.'),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

const podAffinityTerm: Schema = named(
  `${CORE}.PodAffinityTerm`,
  {
    labelSelector: field(labelSelector, 'Pods the term is about.'),
    namespaces: atomicStrings('Namespaces the selected pods are in; the pod namespace when empty.'),
    topologyKey: str('Node label whose equal values form one topology domain.'),
    namespaceSelector: field(labelSelector, 'Namespaces, by label, the selected pods are in.'),
    matchLabelKeys: atomicStrings('Pod label keys whose values are added to labelSelector as In.'),
    mismatchLabelKeys: atomicStrings('Pod label keys whose values are added to labelSelector as NotIn.'),
  },
  { required: ['topologyKey'] },
);

const weightedPodAffinityTerm: Schema = named(
  `${CORE}.WeightedPodAffinityTerm`,
  {
    weight: int32('Weight, 1 to 100.'),
    podAffinityTerm: field(podAffinityTerm, 'The term.'),
  },
  { required: ['weight', 'podAffinityTerm'] },
);

const podAffinity = (name: string, what: string): Schema =>
  named(`${CORE}.${name}`, {
    requiredDuringSchedulingIgnoredDuringExecution: atomicList(
      podAffinityTerm,
      `Hard rules: the pod is scheduled only ${what} pods matching all terms.`,
    ),
    preferredDuringSchedulingIgnoredDuringExecution: atomicList(
      weightedPodAffinityTerm,
      `Soft rules: the scheduler prefers nodes ${what} pods matching these terms.`,
    ),
  });

const affinity: Schema = named(`${CORE}.Affinity`, {
  nodeAffinity: named(`${CORE}.NodeAffinity`, {
    requiredDuringSchedulingIgnoredDuringExecution: named(
      `${CORE}.NodeSelector`,
      { nodeSelectorTerms: atomicList(nodeSelectorTerm, 'Terms, any of which must match.') },
      {
        required: ['nodeSelectorTerms'],
        'x-kubernetes-map-type': 'atomic',
        description: 'Hard rule: the node must match.',
      },
    ),
    preferredDuringSchedulingIgnoredDuringExecution: atomicList(
      named(
        `${CORE}.PreferredSchedulingTerm`,
        { weight: int32('Weight, 1 to 100.'), preference: field(nodeSelectorTerm, 'The term.') },
        { required: ['weight', 'preference'] },
      ),
      'Soft rules: nodes matching more weight are preferred.',
    ),
  }),
  podAffinity: podAffinity('PodAffinity', 'near'),
  podAntiAffinity: podAffinity('PodAntiAffinity', 'away from'),
});

export const toleration: Schema = named(`${CORE}.Toleration`, {
  key: str('Taint key the toleration matches; empty matches all keys (with operator Exists).'),
  operator: enumOf(['Equal', 'Exists'], 'How the key relates to the value. Defaults to Equal.'),
  value: str('Taint value the toleration matches.'),
  effect: enumOf(
    ['NoExecute', 'NoSchedule', 'PreferNoSchedule'],
    'Taint effect to match; empty matches all.',
  ),
  tolerationSeconds: int64('For NoExecute: how long the pod stays bound after the taint appears.'),
});

const topologySpreadConstraint: Schema = named(
  `${CORE}.TopologySpreadConstraint`,
  {
    maxSkew: int32('Largest allowed difference in matching pods between two domains.'),
    topologyKey: str('Node label whose values are the domains.'),
    whenUnsatisfiable: enumOf(
      ['DoNotSchedule', 'ScheduleAnyway'],
      'What to do when the constraint cannot be met.',
    ),
    labelSelector: field(labelSelector, 'Pods that are counted.'),
    minDomains: int32('Minimum number of eligible domains.'),
    nodeAffinityPolicy: str('Honor or Ignore the pod node affinity when computing skew.'),
    nodeTaintsPolicy: str('Honor or Ignore node taints when computing skew.'),
    matchLabelKeys: atomicStrings('Pod label keys whose values narrow the selector.'),
  },
  { required: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'] },
);

const podSecurityContext: Schema = named(`${CORE}.PodSecurityContext`, {
  seLinuxOptions: field(seLinuxOptions, 'SELinux context of all containers.'),
  windowsOptions: field(windowsOptions, 'Windows-specific settings of all containers.'),
  runAsUser: int64('UID the entrypoints run as.'),
  runAsGroup: int64('GID the entrypoints run as.'),
  runAsNonRoot: bool('Refuse to start containers that would run as UID 0.'),
  supplementalGroups: atomicList({ type: 'integer', format: 'int64' }, 'Extra groups of the first process.'),
  supplementalGroupsPolicy: str('Merge or Strict handling of supplemental groups.'),
  fsGroup: int64('Group that owns volumes and is added to every container.'),
  sysctls: atomicList(
    named(
      `${CORE}.Sysctl`,
      { name: str('Name of the sysctl.'), value: str('Value to set.') },
      { required: ['name', 'value'] },
    ),
    'Namespaced sysctls set for the pod.',
  ),
  fsGroupChangePolicy: str('OnRootMismatch or Always: when volume ownership is changed.'),
  seccompProfile: field(seccompProfile, 'Seccomp options of all containers.'),
  appArmorProfile: field(appArmorProfile, 'AppArmor options of all containers.'),
  seLinuxChangePolicy: str('Recursive or MountOption: how SELinux labels are applied to volumes.'),
});

// ---------------------------------------------------------------------------------------------------
// Pod

export const podSpec: Schema = named(
  `${CORE}.PodSpec`,
  {
    volumes: keyedList(volume, ['name'], 'Volumes containers of the pod can mount.', 'merge,retainKeys'),
    initContainers: keyedList(
      container,
      ['name'],
      'Containers run to completion, in order, before the others.',
    ),
    containers: always(keyedList(container, ['name'], 'The containers of the pod. At least one.')),
    ephemeralContainers: keyedList(
      ephemeralContainer,
      ['name'],
      'Debugging containers added to a running pod.',
    ),
    restartPolicy: enumOf(
      ['Always', 'Never', 'OnFailure'],
      'When containers are restarted. Defaults to Always.',
    ),
    terminationGracePeriodSeconds: int64(
      'Seconds between the termination signal and the kill. Defaults to 30.',
    ),
    activeDeadlineSeconds: int64('Seconds the pod may be active before it is failed.'),
    dnsPolicy: enumOf(
      ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'],
      'How the pod DNS configuration is built. Defaults to ClusterFirst.',
    ),
    nodeSelector: strMap('Node labels the pod requires.', { 'x-kubernetes-map-type': 'atomic' }),
    serviceAccountName: str('ServiceAccount the pod runs as.'),
    serviceAccount: str('Deprecated alias of serviceAccountName.'),
    automountServiceAccountToken: bool('Whether a service account token is mounted automatically.'),
    nodeName: str('Node the pod is bound to; set by the scheduler or directly.'),
    hostNetwork: bool('Use the host network namespace.'),
    hostPID: bool('Use the host PID namespace.'),
    hostIPC: bool('Use the host IPC namespace.'),
    shareProcessNamespace: bool('Share one PID namespace between all containers.'),
    securityContext: field(podSecurityContext, 'Pod-wide security options.'),
    imagePullSecrets: keyedList(localObjectReference, ['name'], 'Secrets used to pull images.'),
    hostname: str('Host name of the pod; defaults to the pod name.'),
    subdomain: str('Subdomain, making the FQDN <hostname>.<subdomain>.<namespace>.svc.<cluster domain>.'),
    affinity: field(affinity, 'Scheduling constraints relative to nodes and other pods.'),
    schedulerName: str('Scheduler that places the pod; defaults to default-scheduler.'),
    tolerations: atomicList(toleration, 'Taints the pod tolerates.'),
    hostAliases: keyedList(
      named(
        `${CORE}.HostAlias`,
        { ip: str('IP address of the entry.'), hostnames: atomicStrings('Host names for the address.') },
        { required: ['ip'] },
      ),
      ['ip'],
      'Extra /etc/hosts entries.',
    ),
    priorityClassName: str('PriorityClass the priority is taken from.'),
    priority: int32('Priority of the pod; filled in from priorityClassName.'),
    dnsConfig: named(
      `${CORE}.PodDNSConfig`,
      {
        nameservers: atomicStrings('Name server IP addresses.'),
        searches: atomicStrings('DNS search domains.'),
        options: atomicList(
          named(`${CORE}.PodDNSConfigOption`, { name: str('Option name.'), value: str('Option value.') }),
          'Resolver options.',
        ),
      },
      { description: 'DNS parameters merged into those from dnsPolicy.' },
    ),
    readinessGates: atomicList(
      named(
        `${CORE}.PodReadinessGate`,
        { conditionType: str('Pod condition type that must be True.') },
        { required: ['conditionType'] },
      ),
      'Extra conditions that must hold before the pod is ready.',
    ),
    runtimeClassName: str('RuntimeClass used to run the pod.'),
    enableServiceLinks: bool('Whether service information is injected as environment variables.'),
    preemptionPolicy: enumOf(['Never', 'PreemptLowerPriority'], 'Whether the pod may preempt others.'),
    overhead: quantityMap('Resources the pod sandbox itself consumes.'),
    topologySpreadConstraints: keyedList(
      topologySpreadConstraint,
      ['topologyKey', 'whenUnsatisfiable'],
      'How matching pods are spread across topology domains.',
    ),
    setHostnameAsFQDN: bool('Use the FQDN as the host name.'),
    os: named(
      `${CORE}.PodOS`,
      { name: str('linux or windows.') },
      { required: ['name'], description: 'Operating system the pod targets.' },
    ),
    hostUsers: bool('Use the host user namespace; false gives the pod its own.'),
    schedulingGates: keyedList(
      named(`${CORE}.PodSchedulingGate`, { name: str('Name of the gate.') }, { required: ['name'] }),
      ['name'],
      'While any gate remains, the pod is not scheduled.',
    ),
    resourceClaims: keyedList(
      named(
        `${CORE}.PodResourceClaim`,
        {
          name: str('Name of this claim within the pod.'),
          resourceClaimName: str('Existing ResourceClaim to use.'),
          resourceClaimTemplateName: str('ResourceClaimTemplate to create a claim from.'),
        },
        { required: ['name'] },
      ),
      ['name'],
      'Dynamically allocated resources the pod needs.',
      'merge,retainKeys',
    ),
    resources: field(resourceRequirements, 'Pod-level resource requests and limits.'),
  },
  { required: ['containers'] },
);

const containerState: Schema = named(`${CORE}.ContainerState`, {
  waiting: named(`${CORE}.ContainerStateWaiting`, {
    reason: str('Why the container is not running yet.'),
    message: str('Detail about the wait.'),
  }),
  running: named(`${CORE}.ContainerStateRunning`, { startedAt: time('When the container started.') }),
  terminated: named(
    `${CORE}.ContainerStateTerminated`,
    {
      exitCode: int32('Exit status of the last termination.'),
      signal: int32('Signal of the last termination.'),
      reason: str('Why the container terminated.'),
      message: str('Detail about the termination.'),
      startedAt: time('When the run started.'),
      finishedAt: time('When the run ended.'),
      containerID: str('Runtime ID of the container.'),
    },
    { required: ['exitCode'] },
  ),
});

const containerStatus: Schema = named(
  `${CORE}.ContainerStatus`,
  {
    name: str('Name of the container.'),
    state: field(containerState, 'Current state.'),
    lastState: field(containerState, 'State of the previous run.'),
    ready: bool('Whether the readiness probe passes.'),
    restartCount: int32('Number of restarts.'),
    image: str('Image the container runs.'),
    imageID: str('Image ID the container runs.'),
    containerID: str('Runtime ID of the container, as <type>://<id>.'),
    started: bool('Whether the startup probe has passed.'),
    allocatedResources: quantityMap('Resources the node allocated to the container.'),
    resources: field(resourceRequirements, 'Resources actually configured for the running container.'),
    volumeMounts: keyedList(
      named(
        `${CORE}.VolumeMountStatus`,
        {
          name: str('Name of the volume.'),
          mountPath: str('Path inside the container.'),
          readOnly: bool('Mounted read-only.'),
          recursiveReadOnly: str('Recursive read-only state.'),
        },
        { required: ['name', 'mountPath'] },
      ),
      ['mountPath'],
      'Status of the volume mounts.',
    ),
    user: free('Identity of the first process of the container.'),
    allocatedResourcesStatus: keyedList(
      named(
        `${CORE}.ResourceStatus`,
        {
          name: str('Resource name, such as a device plugin resource or claim:<name>/<request>.'),
          resources: keyedList(
            named(
              `${CORE}.ResourceHealth`,
              {
                resourceID: str('Identifier of one allocated device.'),
                health: str('Healthy, Unhealthy or Unknown.'),
              },
              { required: ['resourceID'] },
            ),
            ['resourceID'],
            'Health of each allocated device.',
            null,
          ),
        },
        { required: ['name'] },
      ),
      ['name'],
      'Health of the resources allocated to the container.',
    ),
    stopSignal: str('Signal that will stop the container.'),
  },
  { required: ['name', 'ready', 'restartCount', 'image', 'imageID'] },
);

const podIP = (name: string): Schema =>
  named(`${CORE}.${name}`, { ip: str('IP address.') }, { required: ['ip'] });

export const podStatus: Schema = named(`${CORE}.PodStatus`, {
  observedGeneration: int64('The metadata.generation this status was computed from.'),
  phase: enumOf(
    ['Failed', 'Pending', 'Running', 'Succeeded', 'Unknown'],
    'Summary of where the pod is in its life.',
  ),
  conditions: conditions(
    named(
      `${CORE}.PodCondition`,
      {
        type: str('Kind of condition: PodScheduled, Initialized, ContainersReady, Ready and so on.'),
        observedGeneration: int64('The metadata.generation the condition was computed from.'),
        status: str('True, False or Unknown.'),
        lastProbeTime: time('When the condition was last probed.'),
        lastTransitionTime: time('When the status last changed.'),
        reason: str('CamelCase reason for the last transition.'),
        message: str('Human-readable detail.'),
      },
      { required: ['type', 'status'] },
    ),
    'Current service state of the pod.',
  ),
  message: str('Human-readable detail about the pod state.'),
  reason: str('CamelCase reason for the pod state, such as Evicted.'),
  nominatedNodeName: str('Node the pod may be placed on after a preemption.'),
  hostIP: str('Primary IP address of the node the pod runs on.'),
  hostIPs: atomicList(podIP('HostIP'), 'IP addresses of the node the pod runs on.', {
    'x-kubernetes-patch-strategy': 'merge',
    'x-kubernetes-patch-merge-key': 'ip',
  }),
  podIP: str('Primary IP address of the pod.'),
  podIPs: keyedList(podIP('PodIP'), ['ip'], 'IP addresses of the pod, one per address family.'),
  startTime: time('When the kubelet acknowledged the pod.'),
  initContainerStatuses: atomicList(containerStatus, 'Status of each init container.'),
  containerStatuses: atomicList(containerStatus, 'Status of each container.'),
  qosClass: enumOf(['BestEffort', 'Burstable', 'Guaranteed'], 'Quality of service class.'),
  ephemeralContainerStatuses: atomicList(containerStatus, 'Status of each ephemeral container.'),
  resize: str('Deprecated state of an in-place resize.'),
  resourceClaimStatuses: keyedList(
    named(
      `${CORE}.PodResourceClaimStatus`,
      {
        name: str('Name of the claim within the pod.'),
        resourceClaimName: str('Name of the generated claim.'),
      },
      { required: ['name'] },
    ),
    ['name'],
    'Names of the ResourceClaims generated for the pod.',
    'merge,retainKeys',
  ),
});

export const podTemplateSpec: Schema = named(`${CORE}.PodTemplateSpec`, {
  metadata: always(field(objectMeta, 'Metadata given to pods created from the template.')),
  spec: always(field(podSpec, 'Specification of pods created from the template.')),
});

export const pod: Schema = kindSchema(
  `${CORE}.Pod`,
  'A Pod is a group of containers scheduled together onto one node, sharing network and storage.',
  {
    spec: always(field(podSpec, 'Desired behaviour of the pod.')),
    status: always(field(podStatus, 'Most recently observed state of the pod. Read-only for users.')),
  },
);

// ---------------------------------------------------------------------------------------------------
// Service

export const servicePort: Schema = named(
  `${CORE}.ServicePort`,
  {
    name: str(
      'Name of the port, unique within the service; required when there is more than one port. ' +
        'It becomes the port name of EndpointSlices.',
    ),
    protocol: protocol('IP protocol of the port: TCP, UDP or SCTP. Defaults to TCP.'),
    appProtocol: str(
      'Application protocol carried over the port, such as `kubernetes.io/h2c` or a domain-prefixed name; ' +
        'a hint for implementations.',
    ),
    port: int32('Port number the service exposes on its cluster IP addresses.'),
    targetPort: intOrString(
      'Port on the selected pods that traffic is sent to: a number, or the name of a container port. ' +
        'Defaults to the value of `port`. Ignored when the service has no selector.',
    ),
    nodePort: int32(
      'Port opened on every node for NodePort and LoadBalancer services; allocated from the node port ' +
        'range when not given.',
    ),
  },
  { required: ['port'] },
);

const sessionAffinityConfig: Schema = named(`${CORE}.SessionAffinityConfig`, {
  clientIP: named(
    `${CORE}.ClientIPConfig`,
    {
      timeoutSeconds: int32(
        'How long, in seconds, a client sticks to one endpoint. 1 to 86400; defaults to 10800.',
      ),
    },
    { description: 'Settings of ClientIP session affinity.' },
  ),
});

export const serviceSpec: Schema = named(`${CORE}.ServiceSpec`, {
  ports: keyedList(
    servicePort,
    ['port', 'protocol'],
    'Ports the service exposes, each identified by port number and protocol.',
  ),
  selector: strMap(
    'Pods with all of these labels back the service. When empty, endpoints are managed by something else.',
    { 'x-kubernetes-map-type': 'atomic' },
  ),
  clusterIP: str(
    'Virtual IP address of the service, normally allocated by the server. `None` makes a headless ' +
      'service. Immutable once set, except that it may be cleared when changing to ExternalName.',
  ),
  clusterIPs: atomicStrings(
    'All cluster IP addresses of the service, at most one per address family; the first equals clusterIP.',
  ),
  type: enumOf(
    ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'],
    'How the service is exposed: ClusterIP (the default, reachable inside the cluster), NodePort ' +
      '(also on a port of every node), LoadBalancer (also through an external load balancer) or ' +
      'ExternalName (a DNS alias for externalName).',
  ),
  externalIPs: atomicStrings(
    'Extra IP addresses, not managed by the cluster, on which nodes accept traffic for the service.',
  ),
  sessionAffinity: enumOf(
    ['ClientIP', 'None'],
    'ClientIP keeps sending a client to the same endpoint; None (the default) spreads connections.',
  ),
  loadBalancerIP: str('Deprecated: an address requested from the load balancer implementation.'),
  loadBalancerSourceRanges: atomicStrings('Client CIDR ranges a LoadBalancer service accepts traffic from.'),
  externalName: str('DNS name the service is an alias (CNAME) for; used with type ExternalName.'),
  externalTrafficPolicy: enumOf(
    ['Cluster', 'Local'],
    'How traffic from outside the cluster is routed: Cluster spreads it over all endpoints, Local only ' +
      'to endpoints on the receiving node and keeps the client address.',
  ),
  healthCheckNodePort: int32(
    'Node port serving health checks for LoadBalancer services with externalTrafficPolicy Local.',
  ),
  publishNotReadyAddresses: bool('Publish endpoints for pods even when they are not ready.'),
  sessionAffinityConfig: field(sessionAffinityConfig, 'Settings of session affinity.'),
  ipFamilies: atomicList(
    enumOf(['', 'IPv4', 'IPv6']),
    'Address families of the service (IPv4, IPv6), in the order of clusterIPs.',
  ),
  ipFamilyPolicy: enumOf(
    ['PreferDualStack', 'RequireDualStack', 'SingleStack'],
    'Whether the service gets one address family or two: SingleStack, PreferDualStack or RequireDualStack.',
  ),
  allocateLoadBalancerNodePorts: bool(
    'Whether node ports are allocated for a LoadBalancer service. Defaults to true.',
  ),
  loadBalancerClass: str('Load balancer implementation that should handle the service. Immutable once set.'),
  internalTrafficPolicy: enumOf(
    ['Cluster', 'Local'],
    'How traffic from inside the cluster is routed: Cluster (the default) or Local (node-local endpoints only).',
  ),
  trafficDistribution: str('Preference for how traffic is spread over endpoints, such as PreferClose.'),
  topologyKeys: atomicStrings(
    'Node label keys, in order of preference, that restrict which endpoints a client is sent to ' +
      '(the removed alpha field, still used by SuperEdge service groups). `*` matches any topology.',
  ),
});

const portStatus: Schema = named(
  `${CORE}.PortStatus`,
  {
    port: int32('Port number.'),
    protocol: protocol('Protocol of the port.'),
    error: str('Problem with the port, in CamelCase, or empty.'),
  },
  { required: ['port', 'protocol'] },
);

export const loadBalancerStatus: Schema = named(`${CORE}.LoadBalancerStatus`, {
  ingress: atomicList(
    named(`${CORE}.LoadBalancerIngress`, {
      ip: str('IP address of the load balancer.'),
      hostname: str('Host name of the load balancer.'),
      ipMode: enumOf(['Proxy', 'VIP'], 'How traffic addressed to ip reaches the nodes.'),
      ports: atomicList(portStatus, 'Status of each service port on the load balancer.'),
    }),
    'Addresses of the load balancer.',
  ),
});

export const serviceStatus: Schema = named(`${CORE}.ServiceStatus`, {
  loadBalancer: always(field(loadBalancerStatus, 'State of the load balancer, if there is one.')),
  conditions: conditions(condition, 'Current conditions of the service.'),
});

export const service: Schema = kindSchema(
  `${CORE}.Service`,
  'A Service gives a set of pods one stable virtual address and DNS name, and spreads traffic across them.',
  {
    spec: always(
      field(serviceSpec, 'Desired behaviour of the service: its ports, selector, type and addresses.'),
    ),
    status: always(field(serviceStatus, 'Most recently observed state of the service. Read-only for users.')),
  },
);

// ---------------------------------------------------------------------------------------------------
// Endpoints

const endpointAddress: Schema = named(
  `${CORE}.EndpointAddress`,
  {
    ip: str('IP address of the endpoint.'),
    hostname: str('Host name of the endpoint.'),
    nodeName: str('Node hosting the endpoint.'),
    targetRef: field(objectReference, 'Object (usually a pod) providing the endpoint.'),
  },
  { required: ['ip'], 'x-kubernetes-map-type': 'atomic' },
);

const coreEndpointPort: Schema = named(
  `${CORE}.EndpointPort`,
  {
    name: str('Name of the port; matches the service port name.'),
    port: int32('Port number.'),
    protocol: protocol(),
    appProtocol: str('Application protocol of the port.'),
  },
  { required: ['port'], 'x-kubernetes-map-type': 'atomic' },
);

const endpointSubset: Schema = named(`${CORE}.EndpointSubset`, {
  addresses: atomicList(endpointAddress, 'Ready addresses.'),
  notReadyAddresses: atomicList(endpointAddress, 'Addresses that are not ready yet.'),
  ports: atomicList(coreEndpointPort, 'Ports available on every address of the subset.'),
});

export const endpoints: Schema = kindSchema(
  `${CORE}.Endpoints`,
  'Endpoints lists the addresses and ports backing a service (superseded by EndpointSlices).',
  { subsets: atomicList(endpointSubset, 'Groups of addresses that share the same ports.') },
);

// ---------------------------------------------------------------------------------------------------
// Namespace

export const namespace: Schema = kindSchema(`${CORE}.Namespace`, 'A Namespace is a scope for names.', {
  spec: named(
    `${CORE}.NamespaceSpec`,
    { finalizers: atomicStrings('Finalizers that must be cleared before the namespace is removed.') },
    { description: 'Desired behaviour of the namespace.' },
  ),
  status: named(
    `${CORE}.NamespaceStatus`,
    {
      phase: enumOf(['Active', 'Terminating'], 'Lifecycle phase of the namespace.'),
      conditions: conditions(
        named(
          `${CORE}.NamespaceCondition`,
          {
            type: str('Kind of condition.'),
            status: str('True, False or Unknown.'),
            lastTransitionTime: time('When the status last changed.'),
            reason: str('CamelCase reason for the last transition.'),
            message: str('Human-readable detail.'),
          },
          { required: ['type', 'status'] },
        ),
        'Current conditions of the namespace.',
      ),
    },
    { description: 'Most recently observed state of the namespace.' },
  ),
});

// ---------------------------------------------------------------------------------------------------
// Node

export const taint: Schema = named(
  `${CORE}.Taint`,
  {
    key: str('Taint key.'),
    value: str('Taint value.'),
    effect: enumOf(
      ['NoExecute', 'NoSchedule', 'PreferNoSchedule'],
      'Effect on pods that do not tolerate it.',
    ),
    timeAdded: time('When a NoExecute taint was added.'),
  },
  { required: ['key', 'effect'] },
);

const nodeSpec: Schema = named(`${CORE}.NodeSpec`, {
  podCIDR: str('Pod IP range assigned to the node.'),
  podCIDRs: setList(
    { type: 'string' },
    'Pod IP ranges assigned to the node, at most one per address family.',
    {
      'x-kubernetes-patch-strategy': 'merge',
    },
  ),
  providerID: str('Identifier of the node at the cloud provider.'),
  unschedulable: bool('When true, no new pods are scheduled onto the node.'),
  taints: atomicList(taint, 'Taints that repel pods not tolerating them.'),
  configSource: free('Deprecated dynamic kubelet configuration source.'),
  externalID: str('Deprecated.'),
});

const nodeCondition: Schema = named(
  `${CORE}.NodeCondition`,
  {
    type: str('Kind of condition: Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable.'),
    status: str('True, False or Unknown.'),
    lastHeartbeatTime: time('When the condition was last reported.'),
    lastTransitionTime: time('When the status last changed.'),
    reason: str('CamelCase reason for the last transition.'),
    message: str('Human-readable detail.'),
  },
  { required: ['type', 'status'] },
);

const nodeAddress: Schema = named(
  `${CORE}.NodeAddress`,
  {
    type: str('Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.'),
    address: str('The address.'),
  },
  { required: ['type', 'address'] },
);

const nodeSystemInfo: Schema = named(
  `${CORE}.NodeSystemInfo`,
  {
    machineID: always(str('Machine ID reported by the node.')),
    systemUUID: always(str('System UUID reported by the node.')),
    bootID: always(str('Boot ID reported by the node.')),
    kernelVersion: always(str('Kernel version (uname -r).')),
    osImage: always(str('Operating system image.')),
    containerRuntimeVersion: always(str('Container runtime and version.')),
    kubeletVersion: always(str('Kubelet version.')),
    kubeProxyVersion: always(str('Deprecated kube-proxy version.')),
    operatingSystem: always(str('Operating system, such as linux.')),
    architecture: always(str('CPU architecture, such as amd64.')),
    swap: named(`${CORE}.NodeSwapStatus`, { capacity: int64('Total swap in bytes.') }),
  },
  {
    required: [
      'machineID',
      'systemUUID',
      'bootID',
      'kernelVersion',
      'osImage',
      'containerRuntimeVersion',
      'kubeletVersion',
      'kubeProxyVersion',
      'operatingSystem',
      'architecture',
    ],
  },
);

const nodeStatus: Schema = named(`${CORE}.NodeStatus`, {
  capacity: quantityMap('Total resources of the node.'),
  allocatable: quantityMap('Resources of the node available to pods.'),
  phase: str('Deprecated lifecycle phase.'),
  conditions: conditions(nodeCondition, 'Current conditions of the node.'),
  addresses: keyedList(nodeAddress, ['type'], 'Addresses the node is reachable at.'),
  daemonEndpoints: always(
    named(`${CORE}.NodeDaemonEndpoints`, {
      kubeletEndpoint: always(
        named(
          `${CORE}.DaemonEndpoint`,
          { Port: always(int32('Port number.')) },
          { required: ['Port'], description: 'Endpoint the kubelet listens on.' },
        ),
      ),
    }),
  ),
  nodeInfo: always(field(nodeSystemInfo, 'Identification and version information of the node.')),
  images: atomicList(
    named(`${CORE}.ContainerImage`, {
      names: atomicStrings('Names of the image.'),
      sizeBytes: int64('Size of the image in bytes.'),
    }),
    'Container images present on the node.',
  ),
  volumesInUse: atomicStrings('Attachable volumes in use on the node.'),
  volumesAttached: atomicList(
    named(
      `${CORE}.AttachedVolume`,
      { name: str('Name of the volume.'), devicePath: str('Where the volume should be available.') },
      { required: ['name', 'devicePath'] },
    ),
    'Volumes attached to the node.',
  ),
  config: free('Status of the dynamic kubelet configuration.'),
  runtimeHandlers: atomicList(
    named(`${CORE}.NodeRuntimeHandler`, {
      name: str('Handler name; empty for the default handler.'),
      features: named(`${CORE}.NodeRuntimeHandlerFeatures`, {
        recursiveReadOnlyMounts: bool('Supports recursive read-only mounts.'),
        userNamespaces: bool('Supports user namespaces.'),
      }),
    }),
    'Runtime handlers available on the node.',
  ),
  features: named(`${CORE}.NodeFeatures`, {
    supplementalGroupsPolicy: bool('Supports the supplementalGroupsPolicy field.'),
  }),
});

export const node: Schema = kindSchema(
  `${CORE}.Node`,
  'A Node is a worker machine of the cluster; its kubelet reports its state here.',
  {
    spec: always(field(nodeSpec, 'Desired configuration of the node.')),
    status: always(field(nodeStatus, 'Most recently observed state of the node.')),
  },
);

// ---------------------------------------------------------------------------------------------------
// Event (core/v1)

export const eventSeries = (name: string): Schema =>
  named(name, {
    count: int32('Number of occurrences in the series so far.'),
    lastObservedTime: microTime('When the last occurrence was observed.'),
  });

export const eventSource: Schema = named(`${CORE}.EventSource`, {
  component: str('Component that reported the event.'),
  host: str('Node it was reported from.'),
});

export const coreEvent: Schema = kindSchema(
  `${CORE}.Event`,
  'An Event reports something that happened to an object, for people reading `kubectl describe`.',
  {
    involvedObject: always(field(objectReference, 'Object the event is about.')),
    reason: str('Short CamelCase reason for the event, machine-readable.'),
    message: str('Human-readable description of what happened.'),
    source: always(field(eventSource, 'Component that reported the event.')),
    firstTimestamp: always(time('When the event was first recorded.')),
    lastTimestamp: always(time('When the most recent occurrence was recorded.')),
    count: int32('Number of times the event has occurred.'),
    type: str('Normal or Warning.'),
    eventTime: always(microTime('When the event was first observed, with microsecond precision.')),
    series: field(eventSeries(`${CORE}.EventSeries`), 'Data about a series of repeated events.'),
    action: str('What was done, or failed, about the object.'),
    related: field(objectReference, 'A second object involved, if any.'),
    reportingComponent: always(str('Controller that emitted the event, such as kubernetes.io/kubelet.')),
    reportingInstance: always(str('Instance of the controller that emitted the event.')),
  },
);

export const serviceAccount: Schema = kindSchema(
  `${CORE}.ServiceAccount`,
  'A ServiceAccount is an identity for processes that run in pods, and the subject of the tokens it is issued.',
  {
    secrets: keyedList(
      objectReference,
      ['name'],
      'Secrets in the same namespace that pods of this account may use.',
    ),
    imagePullSecrets: atomicList(
      localObjectReference,
      'Secrets used to pull the images of pods of this account.',
    ),
    automountServiceAccountToken: bool('Whether pods of this account get an API token mounted by default.'),
  },
);
