#!/usr/bin/env node
import { processIO } from './io.js';
import { run } from './run.js';

run(process.argv.slice(2), processIO()).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`netfilter-sim: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 70;
  },
);
