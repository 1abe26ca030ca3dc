// The token file as kube-apiserver reads it (Go encoding/csv + tokenfile.NewCSV), and the rule that no error
// or warning ever shows a token.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatTokenFileRecord,
  lookupToken,
  parseTokenFile,
  TokenFileError,
  tokenDigest,
  type TokenTable,
  type UserInfo,
} from './token-file.js';

const SECRET = 's3cr3t-T0KEN';

function users(table: TokenTable, tokens: string[]): (UserInfo | undefined)[] {
  return tokens.map((t) => lookupToken(table, t));
}

describe('parseTokenFile', () => {
  const ok: { name: string; text: string; expect: Record<string, UserInfo> }[] = [
    {
      name: 'three columns',
      text: 'tok1,alice,uid-a\n',
      expect: { tok1: { name: 'alice', uid: 'uid-a', groups: [] } },
    },
    {
      name: 'quoted groups with commas',
      text: 'tok1,alice,uid-a,"system:masters,dev"\n',
      expect: { tok1: { name: 'alice', uid: 'uid-a', groups: ['system:masters', 'dev'] } },
    },
    {
      name: 'one unquoted group',
      text: 'tok1,alice,uid-a,dev',
      expect: { tok1: { name: 'alice', uid: 'uid-a', groups: ['dev'] } },
    },
    {
      name: 'an empty 4th column is the single group "" (strings.Split)',
      text: 'tok1,alice,uid-a,\n',
      expect: { tok1: { name: 'alice', uid: 'uid-a', groups: [''] } },
    },
    {
      name: 'columns after the 4th are ignored',
      text: 'tok1,alice,uid-a,dev,extra,more\n',
      expect: { tok1: { name: 'alice', uid: 'uid-a', groups: ['dev'] } },
    },
    {
      name: 'blank lines and CRLF',
      text: '\r\n\ntok1,alice,uid-a\r\n\r\ntok2,bob,uid-b\r\n',
      expect: {
        tok1: { name: 'alice', uid: 'uid-a', groups: [] },
        tok2: { name: 'bob', uid: 'uid-b', groups: [] },
      },
    },
    {
      name: 'quoted fields with "" and a newline inside',
      text: '"tok,1","al""ice","uid\na"\ntok2,bob,uid-b',
      expect: {
        'tok,1': { name: 'al"ice', uid: 'uid\na', groups: [] },
        tok2: { name: 'bob', uid: 'uid-b', groups: [] },
      },
    },
    {
      name: 'spaces are part of the field',
      text: 'tok1, alice ,uid-a\n',
      expect: { tok1: { name: ' alice ', uid: 'uid-a', groups: [] } },
    },
    {
      name: 'a repeated token: the later record wins',
      text: 'tok1,alice,uid-a\ntok1,bob,uid-b\n',
      expect: { tok1: { name: 'bob', uid: 'uid-b', groups: [] } },
    },
    {
      name: 'an empty token is skipped',
      text: ',alice,uid-a\ntok2,bob,uid-b\n',
      expect: { tok2: { name: 'bob', uid: 'uid-b', groups: [] } },
    },
  ];
  for (const c of ok) {
    it(`reads ${c.name}`, () => {
      const table = parseTokenFile(c.text);
      assert.equal(table.size, Object.keys(c.expect).length);
      for (const [token, user] of Object.entries(c.expect)) assert.deepEqual(lookupToken(table, token), user);
    });
  }

  const bad: { name: string; text: string; line: number; message: RegExp }[] = [
    { name: 'two columns', text: `${SECRET},alice\n`, line: 1, message: /at least 3 columns.*found 2/ },
    { name: 'one column', text: `tok,a,b\n\n${SECRET}\n`, line: 3, message: /at least 3 columns.*found 1/ },
    {
      name: 'a "#" line (Go csv has no comments)',
      text: `# ${SECRET}\ntok,a,b\n`,
      line: 1,
      message: /at least 3 columns.*found 1/,
    },
    { name: 'a line of spaces', text: `tok,a,b\n   \n`, line: 2, message: /at least 3 columns/ },
    {
      name: 'a bare quote',
      text: `tok,a,b\n${SECRET}",a,b\n`,
      line: 2,
      message: /bare " in non-quoted-field/,
    },
    {
      name: 'text after a closing quote',
      text: `"${SECRET}"x,a,b\n`,
      line: 1,
      message: /extraneous or missing " in quoted-field/,
    },
    {
      name: 'an unterminated quote',
      text: `tok,a,b\n"${SECRET},a,b\n`,
      line: 2,
      message: /extraneous or missing "/,
    },
  ];
  for (const c of bad) {
    it(`rejects ${c.name}, naming line ${c.line} and not the token`, () => {
      assert.throws(
        () => parseTokenFile(c.text),
        (err: unknown) => {
          assert.ok(err instanceof TokenFileError);
          assert.equal(err.line, c.line);
          assert.match(err.message, new RegExp(`line ${c.line}\\b`));
          assert.match(err.message, c.message);
          assert.ok(!err.message.includes(SECRET), err.message);
          assert.ok(!String(err.stack).includes(SECRET));
          return true;
        },
      );
    });
  }

  it('warns about empty and repeated tokens without showing them', () => {
    const warnings: string[] = [];
    parseTokenFile(`${SECRET},a,1\n,b,2\n${SECRET},c,3\n`, { warn: (m) => warnings.push(m) });
    assert.equal(warnings.length, 2);
    assert.match(warnings[0] ?? '', /empty token in record 2 \(line 2\)/);
    assert.match(warnings[1] ?? '', /duplicate token in record 3 \(line 3\)/);
    for (const w of warnings) assert.ok(!w.includes(SECRET));
  });

  it('keeps only digests of the tokens', () => {
    const table = parseTokenFile(`${SECRET},alice,uid-a\n`);
    assert.deepEqual([...table.keys()], [tokenDigest(SECRET)]);
    assert.ok(!JSON.stringify([...table]).includes(SECRET));
    assert.deepEqual(users(table, [SECRET, `${SECRET}x`, SECRET.slice(0, -1), '']), [
      { name: 'alice', uid: 'uid-a', groups: [] },
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('formats records that read back the same', () => {
    const admin: UserInfo = { name: 'admin', uid: 'admin-uid', groups: ['system:masters', 'ops'] };
    const odd: UserInfo = { name: 'o"dd, name', uid: '', groups: [] };
    const line1 = formatTokenFileRecord('tok1', admin);
    assert.equal(line1, 'tok1,admin,admin-uid,"system:masters,ops"');
    const table = parseTokenFile(`${line1}\n${formatTokenFileRecord('tok2', odd)}\n`);
    assert.deepEqual(users(table, ['tok1', 'tok2']), [admin, odd]);
    assert.throws(() => formatTokenFileRecord('', admin), /non-empty/);
  });
});
