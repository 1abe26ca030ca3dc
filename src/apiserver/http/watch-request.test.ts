// A watch's timeoutSeconds beyond what a timer holds (2^31-1 ms) keeps the watch open, rather than
// ending it at once as an overflowed timer would.
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../../api/resources.js';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';

describe('watch timeoutSeconds', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer();
  });
  after(() => api?.stop());

  for (const timeout of ['1000000000', '99999999999']) {
    it(`timeoutSeconds=${timeout} still delivers events`, { timeout: 30_000 }, async () => {
      const lines = await new Promise<string>((resolve, reject) => {
        const req = https.request(
          `${api.server.url}/api/v1/namespaces/default/services?watch=true&resourceVersion=0&timeoutSeconds=${timeout}`,
          {
            rejectUnauthorized: false, // the test server's throwaway certificate, on loopback
            headers: { Authorization: `Bearer ${api.token}` },
          },
        );
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            text += d;
            if (text.includes(`"name":"t${timeout}"`)) {
              req.destroy();
              resolve(text);
            }
          });
          res.on('end', () => resolve(text));
          void api.client.create(mustFindResource('', 'services'), 'default', {
            metadata: { name: `t${timeout}` },
            spec: { ports: [{ port: 80 }] },
          });
        });
        req.on('error', reject);
        req.end();
      });
      assert.match(lines, /"type":"ADDED".*"name":"t\d+"/);
    });
  }
});
