// The node's directory under --root-dir: files written whole with owner-only modes, and a checkpoint
// that cannot be trusted reported in one line naming the file.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CheckpointError, encodeCheckpoint } from '../core/nodes/checkpoint.js';
import { CHECKPOINT_FILE, readCheckpoint, writeNodeFile } from './checkpoint-store.js';

const root = mkdtempSync(join(tmpdir(), 'svcplane-checkpoint-'));
after(() => rmSync(root, { recursive: true, force: true }));

const cp = {
  node: 'n1',
  nodeUID: 'u',
  podCIDRs: ['127.10.0.0/24'],
  internalIP: '127.0.1.1',
  poolCursors: [4],
  pods: [],
};

describe('checkpoint store', () => {
  it('a node without a checkpoint has none', () => {
    assert.equal(readCheckpoint(root, 'absent'), undefined);
  });

  it('writes ROOT/NAME/checkpoint.json whole, 0600 in a 0700 directory, and reads it back', () => {
    writeNodeFile(root, 'n1', CHECKPOINT_FILE, encodeCheckpoint(cp));
    assert.equal(statSync(join(root, 'n1')).mode & 0o777, 0o700);
    assert.equal(statSync(join(root, 'n1', CHECKPOINT_FILE)).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(join(root, 'n1')), [CHECKPOINT_FILE]); // no temp file left
    assert.deepEqual(readCheckpoint(root, 'n1')?.poolCursors, [4]);
  });

  it('a torn checkpoint is a one-line CheckpointError naming the file', () => {
    writeFileSync(join(root, 'n1', CHECKPOINT_FILE), encodeCheckpoint(cp).slice(0, 40));
    assert.throws(
      () => readCheckpoint(root, 'n1'),
      (e: unknown) =>
        e instanceof CheckpointError &&
        e.message.startsWith(`checkpoint ${join(root, 'n1', CHECKPOINT_FILE)} is corrupt: not JSON`) &&
        !e.message.includes('\n'),
    );
  });
});
