// The programs the benchmark runs: iptables-legacy through a PATH shim, HAProxy, free ports, output of a command.
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** iptables-legacy's programs, for iptablesRunner's `bin`. */
export const LEGACY_BIN = {
  iptables: 'iptables-legacy',
  restore: 'iptables-legacy-restore',
  save: 'iptables-legacy-save',
} as const;

/** An executable on PATH or in the sbin directories PATH often lacks. */
export function findProgram(name: string): string | undefined {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d !== '');
  for (const dir of new Set([...dirs, '/usr/sbin', '/sbin', '/usr/bin', '/bin'])) {
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * A directory of symlinks named iptables, iptables-restore and iptables-save to the legacy programs
 * (xtables-legacy-multi acts on the name it is called by): first on a process's PATH, it makes the proxy,
 * which runs whatever iptables it finds, use iptables-legacy. Undefined when they are not installed.
 */
export function legacyShim(dir: string): string | undefined {
  const shim = path.join(dir, 'iptables-legacy-bin');
  const targets = Object.entries({
    iptables: LEGACY_BIN.iptables,
    'iptables-restore': LEGACY_BIN.restore,
    'iptables-save': LEGACY_BIN.save,
  }).map(([name, legacy]) => [name, findProgram(legacy)] as const);
  if (targets.some(([, t]) => t === undefined)) return undefined;
  mkdirSync(shim, { recursive: true });
  for (const [name, target] of targets) symlinkSync(target!, path.join(shim, name));
  return shim;
}

/** A free TCP port on `host` (bound, read, closed). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A program's stdout (and stderr), for version strings. */
export function runOut(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const c = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', () => resolve(out));
    c.on('error', () => resolve(''));
  });
}
