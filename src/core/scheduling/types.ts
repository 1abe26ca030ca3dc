// The parts of core/v1 Pod and Node the scheduler reads, as the JSON the API serves. Only what the
// filters and scores look at is typed; everything else passes through untouched.
import type { ObjectMeta } from '../../api/object.js';

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect | string;
}

export interface Toleration {
  readonly key?: string;
  readonly operator?: 'Exists' | 'Equal' | string;
  readonly value?: string;
  readonly effect?: TaintEffect | '' | string;
  readonly tolerationSeconds?: number;
}

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: NodeSelectorOperator | string;
  readonly values?: readonly string[];
}

export interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeSelectorRequirement[] | null;
  readonly matchFields?: readonly NodeSelectorRequirement[] | null;
}

export interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  readonly requiredDuringSchedulingIgnoredDuringExecution?: {
    readonly nodeSelectorTerms?: readonly NodeSelectorTerm[] | null;
  } | null;
  readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly PreferredSchedulingTerm[] | null;
}

export type ResourceList = Readonly<Record<string, string | number>>;

export interface ContainerPort {
  readonly containerPort?: number;
  readonly hostPort?: number;
  readonly hostIP?: string;
  readonly protocol?: string;
}

export interface Container {
  readonly name?: string;
  readonly resources?: {
    readonly requests?: ResourceList | null;
    readonly limits?: ResourceList | null;
  } | null;
  readonly ports?: readonly ContainerPort[] | null;
  readonly restartPolicy?: string;
}

export interface PodCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface SchedPod {
  readonly metadata: ObjectMeta;
  readonly spec?: {
    readonly nodeName?: string;
    readonly schedulerName?: string;
    readonly nodeSelector?: Readonly<Record<string, string>> | null;
    readonly affinity?: { readonly nodeAffinity?: NodeAffinity | null } | null;
    readonly tolerations?: readonly Toleration[] | null;
    readonly containers?: readonly Container[] | null;
    readonly initContainers?: readonly Container[] | null;
    readonly overhead?: ResourceList | null;
    readonly schedulingGates?: readonly { readonly name: string }[] | null;
    readonly preemptionPolicy?: string;
    readonly priority?: number;
  };
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly PodCondition[] | null;
  };
}

export interface NodeCondition {
  readonly type: string;
  readonly status: string;
}

export interface SchedNode {
  readonly metadata: ObjectMeta;
  readonly spec?: {
    readonly unschedulable?: boolean;
    readonly taints?: readonly Taint[] | null;
  };
  readonly status?: {
    readonly allocatable?: ResourceList | null;
    readonly conditions?: readonly NodeCondition[] | null;
  };
}

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
