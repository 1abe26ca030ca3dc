// Process entry point: runs the CLI and turns its result into an exit status.
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`svcplane: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
