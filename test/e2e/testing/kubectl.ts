// Running the real kubectl against a test server: the one scripts/ensure-deps.sh chose ($SVCPLANE_KUBECTL, set
// by `npm test`), else the newest kubectl of the machine (the Cloud SDK's 1.33 when it is there, else PATH's), with only PATH, a HOME of its own and the server's kubeconfig in its
// environment, so nothing from the user's ~/.kube leaks in.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import type { TestServer } from './server.js';
import { jsonObjects } from './wrapper.js';

const SDK = '/usr/lib/google-cloud-sdk/bin';
export const KUBECTL =
  process.env.SVCPLANE_KUBECTL || (existsSync(`${SDK}/kubectl.1.33`) ? `${SDK}/kubectl.1.33` : 'kubectl');

/** Runs `kubectl ARGS` and resolves to its stdout; rejects with its stderr when it exits non-zero. */
export type Kubectl = (args: readonly string[], stdin?: string) => Promise<string>;

/** A kubectl bound to `srv`, with `home` as HOME and discovery cache (a directory the caller owns). */
export function kubectlFor(srv: Pick<TestServer, 'kubeconfig'>, home: string): Kubectl {
  return (args, stdin) =>
    new Promise((resolve, reject) => {
      const child = execFile(
        KUBECTL,
        [`--cache-dir=${path.join(home, 'cache')}`, ...args],
        {
          env: { PATH: process.env['PATH'] ?? '', HOME: home, KUBECONFIG: srv.kubeconfig },
          timeout: 60_000,
          maxBuffer: 64 * 1024 * 1024,
        },
        (err, stdout, stderr) => {
          if (err === null) resolve(stdout);
          else reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`));
        },
      );
      if (stdin !== undefined) child.stdin!.end(stdin);
    });
}

/** A running `kubectl get ARGS --watch --output-watch-events -o json`, and what it has printed. */
export interface KubectlWatch<E> {
  readonly proc: ChildProcess;
  /** Every watch event printed so far, in order. */
  readonly events: E[];
  readonly stderr: () => string;
}

/** Starts `kubectl get ARGS --watch --output-watch-events -o json` against `srv`, as kubectlFor runs it. */
export function kubectlWatch<E>(
  srv: Pick<TestServer, 'kubeconfig'>,
  home: string,
  args: readonly string[],
): KubectlWatch<E> {
  const proc = spawn(
    KUBECTL,
    [
      `--cache-dir=${path.join(home, 'cache')}`,
      'get',
      ...args,
      '--watch',
      '--output-watch-events',
      '-o',
      'json',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', HOME: home, KUBECONFIG: srv.kubeconfig },
    },
  );
  const events: E[] = [];
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on(
    'data',
    jsonObjects((d) => events.push(d as E)),
  );
  return { proc, events, stderr: () => err };
}

/** Writes the objects as one multi-document YAML file under `dir` and returns its path. */
export function writeYaml(dir: string, name: string, docs: readonly unknown[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, docs.map((d) => stringify(d)).join('---\n'));
  return file;
}
