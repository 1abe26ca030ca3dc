// A node:test reporter that runs beside the default one (scripts/test.mjs adds it) and prints, after the
// runner's own summary:
//   - the slowest test files: the time spent in the top-level tests each file defines (node:test reports where
//     a test is written, so a shared suite such as src/storage/testing/conformance.ts adds up every file that
//     runs it), and a warning for any *.test.ts past the 90 s one file may take in the suite;
//   - one closing line `N passed, N failed, N skipped`, from the runner's own final counts (cancelled tests
//     count as failed, todo tests as skipped).
const FILE_BUDGET_S = 90;

export default async function* summaryReporter(source) {
  const counts = {};
  /** file → seconds spent in its top-level tests (they run one after another within a file). */
  const perFile = new Map();
  for await (const event of source) {
    const { type, data } = event;
    if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0 && data.file) {
      perFile.set(data.file, (perFile.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0) / 1000);
    } else if (type === 'test:diagnostic' && data.nesting === 0) {
      const m = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(data.message);
      if (m) counts[m[1]] = Number(m[2]);
    }
  }
  const root = process.cwd() + '/';
  const slowest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, 5);
  let out = '\nslowest test files (seconds in the top-level tests each defines):\n';
  for (const [file, s] of slowest) {
    out += `  ${s.toFixed(1).padStart(6)} s  ${file.startsWith(root) ? file.slice(root.length) : file}\n`;
  }
  const over = [...perFile].filter(([file, s]) => file.endsWith('.test.ts') && s > FILE_BUDGET_S);
  for (const [file, s] of over) {
    out += `warning: ${file.replace(root, '')} ran ${s.toFixed(0)} s, over the ${FILE_BUDGET_S} s a file may take\n`;
  }
  const n = (k) => counts[k] ?? 0;
  out += `${n('pass')} passed, ${n('fail') + n('cancelled')} failed, ${n('skipped') + n('todo')} skipped\n`;
  yield out;
}
