// What a line of the repository may not cite: the repository speaks only of itself (its own files and
// docs/) and of upstream (a KEP, a Kubernetes file or function, SuperEdge, OpenYurt, an RFC). So no line
// names a path outside the repository, or an issue number that names no tracker. The rules, one per kind
// of citation:
//   - outside-path: a path that climbs out of the repository into the notes folder kept beside it, or
//     names that folder's absolute place on a development machine;
//   - design-notes: the word for the notes' own design file, in capitals (a design section is cited
//     by its docs/design/ page instead);
//   - issue-number: the word "issue" or "issues" followed by a number, with or without `#` (a project's
//     own tracker, which a reader of the repository cannot open). An upstream issue or pull request is
//     cited by its tracker, `owner/repo#N` or `repo#N` (kubernetes/kubernetes#101350, openyurt#2809,
//     fabric8io/kubernetes-client#734): those pass;
//   - bare-number: a `#` and a number that name no tracker. PKCS#8 passes (a word before the `#`), and
//     so does a colour in a string or after a colon ('#333', `color: #000`), or one whose digits run on
//     into hex letters (`solid #7a0010`);
//   - section: a section sign that follows no document name. Standards and KEPs are cited with theirs
//     (RFC 5280's section 4.2.1.3, KEP-3866's Design section); a bare one points into notes the reader
//     does not have.
// Benchmark labels such as "P5" and bug labels such as "B4" are not matched: they are words the
// project's own benchmark and wrapper docs define, or not, and a regular expression cannot tell which.
// The patterns are assembled from parts so that this file is clean under its own rules: the repository
// scan skips none of its own files.

/** One citation found on a line: the rule it breaks and the text that matched. */
export interface Citation {
  readonly rule: 'outside-path' | 'design-notes' | 'issue-number' | 'bare-number' | 'section';
  readonly text: string;
}

/** One citation in a file, by 1-based line number. */
export interface FileCitation extends Citation {
  readonly line: number;
}

// The notes folder's name, which is also an ordinary word.
const NOTES = 'sha' + 'red';

const RULES: ReadonlyArray<readonly [Citation['rule'], RegExp]> = [
  [
    'outside-path',
    new RegExp(
      [
        String.raw`\.\.\/` + NOTES + String.raw`\b`,
        String.raw`\/work\/` + NOTES + String.raw`\b`,
        String.raw`\b` + NOTES + String.raw`\/reference\b`,
      ].join('|'),
      'g',
    ),
  ],
  ['design-notes', new RegExp(String.raw`\b` + 'DES' + 'IGN' + String.raw`\b`, 'g')],
  ['issue-number', new RegExp(String.raw`\b` + 'iss' + String.raw`ues?[\s:]*#?\d+`, 'gi')],
  ['bare-number', new RegExp(String.raw`(?<![\w./'"\x60-])(?<!:\s*)#\d+(?![\da-fA-F])`, 'g')],
  ['section', /(?<!\b(?:RFC|KEP-)\s?\d+,?\s?)\u00a7/g],
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
