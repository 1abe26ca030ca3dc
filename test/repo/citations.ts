// What a line of the repository may not cite: the repository speaks only of itself (its own files and
// docs/) and of upstream (a KEP, a Kubernetes file or function, SuperEdge, OpenYurt, an RFC). So no line
// names a path outside the repository, the notes a change was written from, or an issue number that
// names no tracker. The rules, one per kind of citation:
//   - outside-path: `../shared`, `/work/shared`, `shared/reference`;
//   - notes-file: the names of those notes (kubernetes-semantics, edge-topology, performance-anchors,
//     client-compatibility, rbac-and-identity, nftables-proxy; zero-values.md, workloads.md). A name
//     inside a path is the path's business: `docs/design/workloads.md`, `src/api/schema/zero-values.ts`
//     and KEP-3866's folder `3866-nftables-proxy` all pass;
//   - design-notes: `DESIGN`, in capitals, as in "DESIGN §2" or "DESIGN.md";
//   - issue-number: "issue 13", "Issue #4", "issues 5 and 6", "P5 of issue 15". An upstream issue or pull
//     request is cited by its tracker, `owner/repo#N` or `repo#N` (kubernetes/kubernetes#101350,
//     openyurt#2809, fabric8io/kubernetes-client#734): those pass;
//   - bare-number: a `#N` that names no tracker ("(#15)", "see #139525"). PKCS#8 passes (a word before
//     the `#`), and so does a colour in a string or after a colon ('#333', `color: #000`);
//   - section: a `§` that follows no document name. Standards and KEPs are cited with theirs ("RFC 5280
//     §4.2.1.3", "KEP-3866 §Design"); a bare "§1.5" points into notes the reader does not have.
// Benchmark labels such as "P5" and bug labels such as "B4" are not matched: they are words the
// project's own benchmark and wrapper docs define, or not, and a regular expression cannot tell which.

/** One citation found on a line: the rule it breaks and the text that matched. */
export interface Citation {
  readonly rule: 'outside-path' | 'notes-file' | 'design-notes' | 'issue-number' | 'bare-number' | 'section';
  readonly text: string;
}

/** One citation in a file, by 1-based line number. */
export interface FileCitation extends Citation {
  readonly line: number;
}

// No letter, digit, `_`, `.`, `/` or `-` before a name: it stands alone, not as part of a path or a word.
const ALONE = String.raw`(?<![\w./-])`;

const RULES: ReadonlyArray<readonly [Citation['rule'], RegExp]> = [
  ['outside-path', /\.\.\/shared\b|\/work\/shared\b|\bshared\/reference\b/g],
  [
    'notes-file',
    new RegExp(
      ALONE +
        String.raw`(?:(?:kubernetes-semantics|edge-topology|performance-anchors|client-compatibility|rbac-and-identity|nftables-proxy)(?:\.md)?|(?:zero-values|workloads)\.md)(?![\w-])`,
      'g',
    ),
  ],
  ['design-notes', /\bDESIGN\b/g],
  ['issue-number', /\bissues?[\s:]*#?\d+/gi],
  ['bare-number', new RegExp(String.raw`(?<![\w./'"\x60-])(?<!:\s*)#\d+`, 'g')],
  ['section', /(?<!\b(?:RFC|KEP-)\s?\d+,?\s?)§/g],
];

/** The citations on one line, in the order of the rules, each at most once per match. */
export function citationsIn(line: string): Citation[] {
  const found: Citation[] = [];
  for (const [rule, re] of RULES) {
    for (const m of line.matchAll(re)) found.push({ rule, text: m[0] });
  }
  return found;
}

/** The citations in a file's text, with their line numbers. */
export function citationsInText(text: string): FileCitation[] {
  const found: FileCitation[] = [];
  text.split('\n').forEach((line, i) => {
    for (const c of citationsIn(line)) found.push({ ...c, line: i + 1 });
  });
  return found;
}
