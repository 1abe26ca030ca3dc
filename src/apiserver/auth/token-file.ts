// kube-apiserver's --token-auth-file: CSV records `token,user,uid[,"group1,group2"]`, read the way upstream
// reads it (Go's encoding/csv with a variable field count, then tokenfile.NewCSV):
//  - blank lines are skipped; there are NO comment lines ("# x" is a one-field record, hence an error);
//  - fields may be double-quoted, with "" for a quote and commas or newlines inside; a bare " in an
//    unquoted field is an error; spaces are kept as they are;
//  - at least 3 fields; a 4th is split on "," into groups ("" gives the single group ""), later ones ignored;
//  - an empty token skips the record and a repeated token replaces the earlier one, each with a warning.
// Error and warning texts name the line or record but never contain a token.
//
// The table is keyed by SHA-256(token), so a lookup hashes the presented token and the map compares digests:
// how long a lookup takes tells an attacker nothing about how close a guess is to a real token.
import { createHash } from 'node:crypto';
import type { UserInfo } from './types.js';

export type { UserInfo } from './types.js';

declare const tokenDigestBrand: unique symbol;
/** The SHA-256 of a token (base64): the only form in which tokens are kept. */
export type TokenDigest = string & { readonly [tokenDigestBrand]: true };

/** Token digest → user. Look tokens up with lookupToken, never with the raw token. */
export type TokenTable = Map<TokenDigest, UserInfo>;

export function tokenDigest(token: string): TokenDigest {
  return createHash('sha256').update(token, 'utf8').digest('base64') as TokenDigest;
}

/** The user a bearer token belongs to, or undefined. Takes time independent of the token's contents. */
export function lookupToken(table: ReadonlyMap<TokenDigest, UserInfo>, token: string): UserInfo | undefined {
  return table.get(tokenDigest(token));
}

export class TokenFileError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'TokenFileError';
  }
}

export interface ParseTokenFileOptions {
  /** Receives upstream's warnings (empty or duplicate token); they never contain the token. */
  readonly warn?: (message: string) => void;
}

/** Parses a token file. Throws TokenFileError naming the line; the message never includes a token. */
export function parseTokenFile(text: string, opts: ParseTokenFileOptions = {}): TokenTable {
  const table: TokenTable = new Map();
  let recordNum = 0;
  for (const { fields, line } of readCsv(text)) {
    if (fields.length < 3) {
      throw new TokenFileError(
        `token file line ${line}: must have at least 3 columns (token, user name, user uid), found ${fields.length}`,
        line,
      );
    }
    recordNum++;
    const [token = '', name = '', uid = '', groups] = fields;
    if (token === '') {
      opts.warn?.(`token file: empty token in record ${recordNum} (line ${line}); record skipped`);
      continue;
    }
    const digest = tokenDigest(token);
    if (table.has(digest)) {
      opts.warn?.(
        `token file: duplicate token in record ${recordNum} (line ${line}); it replaces the earlier one`,
      );
    }
    table.set(digest, { name, uid, groups: groups === undefined ? [] : groups.split(',') });
  }
  return table;
}

/** One token-file line for `user`, quoting fields that need it, e.g. `tok,admin,admin-uid,"system:masters,x"`. */
export function formatTokenFileRecord(token: string, user: UserInfo): string {
  if (token === '' || /[\r\n]/.test(token)) throw new Error('a token must be non-empty and on one line');
  const fields = [token, user.name, user.uid];
  if (user.groups.length > 0) fields.push(user.groups.join(','));
  return fields.map(csvField).join(',');
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value === '' ? `"${value.replaceAll('"', '""')}"` : value;
}

interface CsvRecord {
  readonly fields: string[];
  /** The 1-based line the record starts on. */
  readonly line: number;
}

/**
 * RFC 4180 records with encoding/csv's quirks: "\r\n" reads as "\n" (also inside quotes), empty lines are
 * skipped, a quoted field runs across lines until its closing quote, and any other quote misuse is an error.
 */
function* readCsv(text: string): Generator<CsvRecord> {
  const src = text.replaceAll('\r\n', '\n').replace(/\r$/, '');
  let pos = 0;
  let lineNo = 1;
  const fail = (line: number, column: number, what: string): never => {
    throw new TokenFileError(`token file line ${line}, column ${column}: ${what}`, line);
  };
  while (pos < src.length) {
    if (src[pos] === '\n') {
      pos++;
      lineNo++;
      continue;
    }
    const startLine = lineNo;
    let lineStart = pos;
    const fields: string[] = [];
    for (;;) {
      // One field, starting at pos.
      if (src[pos] === '"') {
        let value = '';
        pos++;
        for (;;) {
          const q = src.indexOf('"', pos);
          if (q < 0) fail(startLine, pos - lineStart + 1, 'extraneous or missing " in quoted-field');
          const chunk = src.slice(pos, q);
          const newlines = chunk.split('\n').length - 1;
          if (newlines > 0) {
            lineNo += newlines;
            lineStart = pos + chunk.lastIndexOf('\n') + 1;
          }
          value += chunk;
          pos = q + 1;
          if (src[pos] === '"') {
            value += '"';
            pos++;
            continue;
          }
          if (pos >= src.length || src[pos] === ',' || src[pos] === '\n') break;
          fail(lineNo, pos - lineStart + 1, 'extraneous or missing " in quoted-field');
        }
        fields.push(value);
      } else {
        let end = pos;
        while (end < src.length && src[end] !== ',' && src[end] !== '\n') end++;
        const value = src.slice(pos, end);
        const quote = value.indexOf('"');
        if (quote >= 0) fail(lineNo, pos - lineStart + quote + 1, 'bare " in non-quoted-field');
        fields.push(value);
        pos = end;
      }
      if (src[pos] === ',') {
        pos++;
        continue;
      }
      break; // end of line or of text
    }
    yield { fields, line: startLine };
    if (src[pos] === '\n') {
      pos++;
      lineNo++;
    }
  }
}
