// apps/v1 Deployment defaulting (SetDefaults_Deployment) and its pod template's defaults.
import { defaultPodTemplate } from './pod.js';
import { type Obj, child, ensureChild, setDefault, setDefaultString } from './util.js';

/** Default a DeploymentSpec in place (a Deployment's spec, a DeploymentGrid template). */
export function defaultDeploymentSpec(spec: Obj): void {
  setDefault(spec, 'replicas', 1);
  const strategy = ensureChild(spec, 'strategy');
  if (strategy !== undefined) {
    setDefaultString(strategy, 'type', 'RollingUpdate');
    if (strategy['type'] === 'RollingUpdate') {
      const ru = ensureChild(strategy, 'rollingUpdate');
      if (ru !== undefined) {
        setDefault(ru, 'maxUnavailable', '25%');
        setDefault(ru, 'maxSurge', '25%');
      }
    }
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  setDefault(spec, 'progressDeadlineSeconds', 600);
  defaultPodTemplate(child(spec, 'template'));
}
