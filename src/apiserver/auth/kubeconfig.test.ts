// The admin kubeconfig, read back by the yaml package and by @kubernetes/client-node (as kubectl would read it).
import { KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { generateToken, renderKubeconfig } from './kubeconfig.js';
import { generateCA } from './pki.js';

const ca = generateCA('svcplane-ca');

describe('renderKubeconfig', () => {
  it('writes one cluster, user and context, with the CA embedded', () => {
    const token = generateToken();
    const text = renderKubeconfig({
      server: 'https://127.0.0.1:6443',
      caPem: ca.certPem,
      user: 'admin',
      token,
    });
    assert.deepEqual(parse(text), {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'svcplane',
          cluster: {
            server: 'https://127.0.0.1:6443',
            'certificate-authority-data': Buffer.from(ca.certPem).toString('base64'),
          },
        },
      ],
      users: [{ name: 'admin', user: { token } }],
      contexts: [{ name: 'svcplane', context: { cluster: 'svcplane', user: 'admin' } }],
      'current-context': 'svcplane',
      preferences: {},
    });
    // On one line, unfolded, as kubectl writes it.
    const data = Buffer.from(ca.certPem).toString('base64');
    assert.ok(text.split('\n').some((l) => l.trim() === `certificate-authority-data: ${data}`));
  });

  it('is what a Kubernetes client reads', () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      renderKubeconfig({
        server: 'https://127.0.0.1:6443',
        caPem: ca.certPem,
        user: 'admin',
        token: 'tok',
        clusterName: 'edge',
        contextName: 'edge-admin',
      }),
    );
    assert.equal(kc.getCurrentContext(), 'edge-admin');
    assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
    assert.equal(Buffer.from(kc.getCurrentCluster()?.caData ?? '', 'base64').toString(), ca.certPem);
    assert.equal(kc.getCurrentUser()?.token, 'tok');
  });

  it('refuses incomplete input', () => {
    const ok = { server: 'https://127.0.0.1:6443', caPem: ca.certPem, user: 'admin', token: 't' };
    assert.throws(() => renderKubeconfig({ ...ok, server: 'http://127.0.0.1:6443' }), /https/);
    assert.throws(() => renderKubeconfig({ ...ok, caPem: 'nope' }), /PEM/);
    assert.throws(() => renderKubeconfig({ ...ok, token: '' }), /token/);
    assert.throws(() => renderKubeconfig({ ...ok, user: '' }), /non-empty/);
  });
});

describe('generateToken', () => {
  it('makes 32 random bytes as base64url', () => {
    const a = generateToken();
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(a, 'base64url').length, 32);
    assert.notEqual(generateToken(), a);
  });
});
