// A node's files under --root-dir (the kubelet's flag): ROOT_DIR/NAME/ (mode 0700) holds
//   checkpoint.json        the pods the node runs and its pod IP pool position (core/nodes/checkpoint.ts)
//   authorizations.json    the kubelet API's allowed decisions kept for offline use (core/nodes/kubelet-auth.ts)
//   pki/kubelet.crt, .key  its self-signed serving certificate (unless --tls-cert-file)
// Every file is written atomically (temp + fsync + rename), mode 0600.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointError, decodeCheckpoint, type NodeCheckpoint } from '../core/nodes/checkpoint.js';
import { makeDirs } from '../storage/make-dirs.js';
import { writeFileAtomic, writeFileAtomicAsync } from '../storage/write-file-atomic.js';

export const DEFAULT_ROOT_DIR = '.svcplane/node';
export const CHECKPOINT_FILE = 'checkpoint.json';
export const AUTHORIZATIONS_FILE = 'authorizations.json';

/** ROOT_DIR/NAME, created (0700) when missing. */
export function nodeDir(rootDir: string, node: string): string {
  const dir = join(rootDir, node);
  makeDirs(dir, 0o700);
  return dir;
}

/**
 * The node's checkpoint, or undefined when it has none. A file that cannot be read or trusted throws
 * CheckpointError naming the file.
 */
export function readCheckpoint(rootDir: string, node: string): NodeCheckpoint | undefined {
  const file = join(rootDir, node, CHECKPOINT_FILE);
  if (!existsSync(file)) return undefined;
  try {
    return decodeCheckpoint(readFileSync(file, 'utf8'), node);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new CheckpointError(`checkpoint ${file} is corrupt: ${why}`, { cause: err });
  }
}

/** Writes `text` to ROOT_DIR/NAME/FILE atomically (0600). */
export function writeNodeFile(rootDir: string, node: string, file: string, text: string): void {
  writeFileAtomic(join(nodeDir(rootDir, node), file), text);
}

/** writeNodeFile without blocking (the kubelets' checkpoints, many nodes at once). */
export async function writeNodeFileAsync(
  rootDir: string,
  node: string,
  file: string,
  text: string,
): Promise<void> {
  await writeFileAtomicAsync(join(nodeDir(rootDir, node), file), text);
}
