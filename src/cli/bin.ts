#!/usr/bin/env node
import { main } from './main.js';

// `forkwatch analyze x | head`: a closed pipe ends the output, it is not a crash.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`forkwatch: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
