// One `svcplane ARGS` run for end-to-end tests, from the compiled bin/ (npm run build), with only PATH
// and a HOME of the test's own in its environment (no KUBECONFIG from the user's): its exit code and
// what it printed.
import { execFile } from 'node:child_process';
import path from 'node:path';

const BIN = path.resolve('bin/svcplane.js');

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runSvcplane(args: readonly string[], home: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env['PATH'] ?? '', HOME: home }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err !== null && typeof err.code !== 'number') reject(err);
        else resolve({ code: err === null ? 0 : (err.code as number), stdout, stderr });
      },
    );
  });
}
