// A `svcplane node` process for end-to-end tests, handed back once it printed its ready line
// ("… running …", online or offline), with what it printed so far.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { until } from './until.js';

const BIN = path.resolve('bin/svcplane.js');

export interface NodeProcess {
  readonly proc: ChildProcess;
  readonly out: () => string;
  readonly err: () => string;
}

export async function startNodeProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<NodeProcess> {
  const proc = spawn(process.execPath, [BIN, 'node', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await until(
    () => `svcplane node to start:\n${out}\n${err}`,
    30_000,
    () => {
      if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${err}`);
      return /running/.test(out);
    },
  );
  return { proc, out: () => out, err: () => err };
}
