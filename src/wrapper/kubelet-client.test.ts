// The kubelet reader against a real HTTPS server (test/support/fake-kubelet.ts): the serving certificate
// verified with a CA and not without one, a client certificate or else the bearer token, and each failure
// as an Error that says why.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  kubeletPod,
  startFakeKubelet,
  throwawayCerts,
  type FakeKubelet,
} from '../../test/support/fake-kubelet.js';
import { kubeletPodsReader } from './kubelet-client.js';

describe('kubeletPodsReader', () => {
  let kubelet: FakeKubelet;
  before(async () => {
    kubelet = await startFakeKubelet();
    kubelet.pods = [kubeletPod('a', { node: 'edge-0', ip: '10.0.0.1' })];
  });
  after(() => kubelet.stop());
  const signal = new AbortController().signal;

  it('reads /pods with the CA, sending the bearer token when there is no client certificate', async () => {
    const read = kubeletPodsReader({
      url: kubelet.url,
      ca: kubelet.caPem,
      authorization: async () => 'Bearer t0',
    });
    const body = (await read(signal)) as { kind: string; items: unknown[] };
    assert.equal(body.kind, 'PodList');
    assert.equal(body.items.length, 1);
    assert.deepEqual(
      { ...kubelet.requests.at(-1), at: 0 },
      { authorization: 'Bearer t0', clientCert: false, at: 0 },
    );
  });

  it('presents a client certificate instead of the token when given one', async () => {
    const { client } = throwawayCerts();
    const read = kubeletPodsReader({
      url: kubelet.url,
      ca: kubelet.caPem,
      cert: client.certPem,
      key: client.keyPem,
      authorization: async () => 'Bearer t0',
    });
    await read(signal);
    assert.deepEqual(
      { ...kubelet.requests.at(-1), at: 0 },
      { authorization: undefined, clientCert: true, at: 0 },
    );
  });

  it('refuses a serving certificate its CA did not sign; without a CA it is not verified', async () => {
    const { otherCaPem } = throwawayCerts();
    await assert.rejects(kubeletPodsReader({ url: kubelet.url, ca: otherCaPem })(signal), /no answer \(/);
    assert.equal(
      ((await kubeletPodsReader({ url: kubelet.url })(signal)) as { kind: string }).kind,
      'PodList',
    );
  });

  it('says why it failed: a status, no answer', async () => {
    kubelet.failWith = 401;
    try {
      await assert.rejects(kubeletPodsReader({ url: kubelet.url })(signal), /^Error: status 401$/);
    } finally {
      kubelet.failWith = undefined;
    }
    await assert.rejects(
      kubeletPodsReader({ url: 'https://127.0.0.1:1' })(signal),
      /no answer \(ECONNREFUSED\)/,
    );
  });
});
