// Process entry point: runs the CLI and turns its result into an exit status.
import { main } from './main.js';
import { errText } from '../api/err-text.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`svcplane: ${errText(err)}\n`);
    process.exitCode = 1;
  },
);
