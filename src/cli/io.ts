/**
 * What a CLI command may touch: its output streams and the file system, passed in so that tests
 * can run commands in-process.
 * @internal
 */
import { readFileSync } from 'node:fs';

export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Reads a file, or standard input for `-`. */
  readonly readFile: (path: string) => string;
  /** Whether colours may be used (a TTY, no NO_COLOR). */
  readonly color: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Exit codes: 0 ok, 1 bad input (or a negative answer the user asked about), 2 usage. */
export const EXIT_OK = 0;
export const EXIT_INPUT = 1;
export const EXIT_USAGE = 2;

/** A usage error: wrong flags or arguments. Exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The real process's I/O. */
export function processIO(): CliIO {
  const env = process.env;
  // `netfilter-sim … | head`: a closed pipe ends the output quietly, as for other tools.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
  }
  const color = !!process.stdout.isTTY && env['NO_COLOR'] === undefined && env['TERM'] !== 'dumb';
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    readFile: (p) => (p === '-' ? readFileSync(0, 'utf8') : readFileSync(p, 'utf8')),
    color,
    env,
  };
}

/** An I/O that records output, for tests. */
export function memoryIO(files: Record<string, string> = {}, stdin = ''): CliIO & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (t: string) => void (io.out += t),
    stderr: (t: string) => void (io.err += t),
    readFile: (p: string) => {
      if (p === '-') return stdin;
      if (p in files) return files[p]!;
      return readFileSync(p, 'utf8');
    },
    color: false,
    env: {} as Record<string, string | undefined>,
  };
  return io;
}
