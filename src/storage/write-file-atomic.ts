// Writing a small file so that a crash leaves either the old content or the new one, never a torn file:
// the data goes to a temporary file beside it, is fsynced, renamed over the target, and the directory
// is fsynced so the rename itself survives a power loss. Secrets and checkpoints are mode 0600.
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes `data` to `path` atomically (temp + fsync + rename + directory fsync), with `mode` (default 0600). */
export function writeFileAtomic(path: string, data: string, mode = 0o600): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      fchmodSync(fd, mode); // whatever the umask
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  try {
    const dir = openSync(dirname(path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // A directory that cannot be opened for fsync (some filesystems): the rename is still atomic.
  }
}

/** writeFileAtomic without blocking the event loop (many small files: a process's node checkpoints). */
export async function writeFileAtomicAsync(path: string, data: string, mode = 0o600): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    const fh = await open(tmp, 'w', mode);
    try {
      await fh.chmod(mode); // whatever the umask
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  try {
    const dir = await open(dirname(path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    // A directory that cannot be opened for fsync (some filesystems): the rename is still atomic.
  }
}
