// `svcplane crds` in-process: the text it prints and its usage errors. The command as a process (exit
// codes, one-line errors, a closed pipe) is in test/e2e/cli.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { gridCRDs } from '../api/schema/crds.js';
import { CRDS_HELP, crdsCommand, formatCRDs } from './crds-command.js';
import { UsageError } from './flags.js';

function run(...args: string[]): { code: number; text: string } {
  let text = '';
  const code = crdsCommand(args, (s) => {
    text += s;
  });
  return { code, text };
}

describe('svcplane crds', () => {
  it('prints both CRDs as a two-document YAML stream that parses back to the generated objects', () => {
    const { code, text } = run();
    assert.equal(code, 0);
    const docs = parseAllDocuments(text);
    assert.ok(Array.isArray(docs));
    assert.equal(docs.length, 2);
    for (const d of docs) assert.deepEqual(d.errors, []);
    assert.deepEqual(
      docs.map((d) => d.toJS() as unknown),
      JSON.parse(JSON.stringify(gridCRDs())),
    );
    assert.deepEqual(
      docs.map((d) => (d.toJS() as { metadata: { name: string } }).metadata.name),
      ['servicegrids.superedge.io', 'deploymentgrids.superedge.io'],
    );
    assert.equal(run('-o', 'yaml').text, text);
  });

  it('-o json prints a v1 List of both', () => {
    const { code, text } = run('-o', 'json');
    assert.equal(code, 0);
    const list = JSON.parse(text) as { apiVersion: string; kind: string; items: unknown[] };
    assert.equal(list.apiVersion, 'v1');
    assert.equal(list.kind, 'List');
    assert.deepEqual(list.items, JSON.parse(JSON.stringify(gridCRDs())));
    assert.equal(run('--output=json').text, text);
  });

  it('writes no YAML anchors and does not fold long descriptions', () => {
    const text = formatCRDs(gridCRDs(), 'yaml');
    assert.doesNotMatch(text, /: [&*]a\d+/);
    assert.doesNotMatch(text, /description: [>|]/);
  });

  it('--help prints its usage; bad flags and arguments are usage errors', () => {
    const help = run('--help');
    assert.deepEqual(help, { code: 0, text: CRDS_HELP });
    assert.throws(() => run('--bogus'), UsageError);
    assert.throws(() => run('-o', 'xml'), {
      name: 'UsageError',
      message: /--output: want one of yaml, json/,
    });
    assert.throws(() => run('servicegrids'), { name: 'UsageError', message: /takes no arguments/ });
  });
});
