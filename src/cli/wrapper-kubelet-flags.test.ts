// `svcplane wrapper`'s kubelet flags: what is refused, with a usage error that says why (exit 2), before
// anything is started.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from './flags.js';
import { wrapperCommand } from './wrapper-command.js';

describe('svcplane wrapper --kubelet-*', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svcplane-wrapper-kubelet-'));
  const pem = join(dir, 'x.pem');
  writeFileSync(pem, 'not used');
  after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) =>
    wrapperCommand(['--hostname', 'edge-0', '--data-dir', join(dir, 'data'), ...args], () => {}, '0.0.0');

  const refused: [string[], RegExp][] = [
    [
      ['--kubelet-url', 'http://127.0.1.1:10250'],
      /--kubelet-url: "http:\/\/127.0.1.1:10250" is not an https URL/,
    ],
    [['--kubelet-url', '127.0.1.1:10250'], /is not an https URL/],
    [
      ['--kubelet-url', 'https://127.0.1.1:10250', '--kubelet-client-certificate', pem],
      /go together: give both or neither/,
    ],
    [['--kubelet-url', 'https://127.0.1.1:10250', '--kubelet-client-key', pem], /go together/],
    [
      ['--kubelet-url', 'https://127.0.1.1:10250', '--kubelet-certificate-authority', join(dir, 'none')],
      /--kubelet-certificate-authority: cannot read/,
    ],
    [
      ['--kubelet-url', 'https://127.0.1.1:10250', '--kubelet-poll-interval', '0s'],
      /--kubelet-poll-interval/,
    ],
    [['--kubelet-poll-interval', '1s'], /--kubelet-poll-interval needs --kubelet-url/],
  ];
  for (const [args, why] of refused)
    it(`refuses ${args.join(' ')}`, async () => {
      await assert.rejects(
        run(...args),
        (err: unknown) => err instanceof UsageError && why.test((err as Error).message),
      );
    });
});
