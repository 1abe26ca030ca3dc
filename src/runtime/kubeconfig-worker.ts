// The worker thread behind kubeconfig.ts for credentials that change (an exec plugin, an auth provider,
// the in-cluster token file client-node re-reads every minute): it loads the kubeconfig with
// @kubernetes/client-node (kubeconfig-load.ts), answers once through `port`, wakes the blocked caller
// through `signal`, and stays to answer each credentials request on `port`. Static credentials never get
// here: a child process reads those (kubeconfig-child.ts) and gives all of its memory back when it exits.
import { workerData, type MessagePort } from 'node:worker_threads';
import {
  credentialsOf,
  loadAnswer,
  type CredentialsReply,
  type CredentialsRequest,
} from './kubeconfig-load.js';

/** What kubeconfig.ts hands the thread. */
export interface KubeconfigWorkerData {
  readonly path?: string;
  readonly context?: string;
  /** Answers (the first one read synchronously with receiveMessageOnPort) and, when dynamic, requests. */
  readonly port: MessagePort;
  /** Set to 1 and notified once the first answer is on `port`. */
  readonly signal: Int32Array;
}

const { path, context, port, signal } = workerData as KubeconfigWorkerData;
const { answer, dynamic } = await loadAnswer(path, context);
port.postMessage(answer);
Atomics.store(signal, 0, 1);
Atomics.notify(signal, 0);

if (dynamic === undefined) {
  port.close(); // nothing left to do: the thread ends and its heap (client-node's with it) is freed
} else {
  const kc = dynamic;
  port.on('message', (req: CredentialsRequest) => {
    void credentialsOf(kc).then((a) => port.postMessage({ ...a, id: req.id } satisfies CredentialsReply));
  });
}
