/**
 * What a CLI command may touch: its output streams and the file system, passed in so that tests
 * can run commands in-process.
 * @internal
 */
import { readFileSync } from 'node:fs';
import { NetfilterSimError, formatDiagnostic, type Diagnostic } from '../errors.js';

export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Reads a file, or standard input for `-`. */
  readonly readFile: (path: string) => string;
  /** Whether colours may be used: standard output is a terminal (or FORCE_COLOR is set), and NO_COLOR is not. */
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

/** Prints a usage error the same way for every command. */
export function usageMessage(command: string, message: string): string {
  return `netfilter-sim ${command}: ${message}\nRun "netfilter-sim ${command} --help" for usage.\n`;
}

/** Whether `e` is the error `node:util` `parseArgs` throws for unknown or malformed options. */
export function isParseArgsError(e: unknown): e is Error {
  return e instanceof TypeError && String((e as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS');
}

/** `parseArgs`' message without its advice about positionals after `--`. */
export function parseArgsMessage(e: Error): string {
  return e.message.replace(/\. To specify a positional argument starting with a '-'.*$/s, '');
}

const ERRNO_TEXT: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a component of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'file name too long',
  EAGAIN: 'standard input is not ready (non-blocking)',
};

/** A file (or standard input) that could not be read. Exits 1, naming the file and the reason. */
export class FileReadError extends Error {
  readonly path: string;
  readonly code: string;
  constructor(path: string, cause: unknown) {
    const errno = typeof (cause as { code?: unknown } | null)?.code === 'string' ? (cause as { code: string }).code : 'EIO';
    const why = ERRNO_TEXT[errno] ?? (cause instanceof Error ? cause.message : String(cause));
    super(`cannot read ${path === '-' ? 'standard input' : path}: ${why}`);
    this.name = 'FileReadError';
    this.path = path;
    this.code = errno;
  }
}

/** Reads a file, or standard input for `-`, turning any failure into a {@link FileReadError}. */
export function readInput(path: string, stdin: () => string = () => readFileSync(0, 'utf8')): string {
  try {
    return path === '-' ? stdin() : readFileSync(path, 'utf8');
  } catch (e) {
    throw new FileReadError(path, e);
  }
}

/**
 * Errors in a file the user gave (rules, a manifest): printed as `FILE:LINE:COLUMN: message`
 * with the line and a caret under the offending token. Exits 1.
 */
export class SourceError extends Error {
  readonly file: string;
  readonly source: string | undefined;
  readonly diagnostics: readonly Diagnostic[];
  constructor(file: string, source: string | undefined, diagnostics: readonly Diagnostic[]) {
    super(diagnostics[0]?.message ?? 'bad input');
    this.name = 'SourceError';
    this.file = file;
    this.source = source;
    this.diagnostics = diagnostics;
  }

  /** The diagnostics, formatted, one block each, each ending with a newline. */
  format(): string {
    const name = this.file === '-' ? '<stdin>' : this.file;
    return this.diagnostics.map((d) => formatDiagnostic(d, this.source, name) + '\n').join('');
  }
}

/**
 * Whether to colour: standard output is a terminal (or `FORCE_COLOR` is set to anything but `0`
 * or `false`), `TERM` is not `dumb`, and `NO_COLOR` is unset or empty (https://no-color.org).
 */
export function colorFromEnv(env: Readonly<Record<string, string | undefined>>, isTTY: boolean): boolean {
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '0' && force !== 'false') return true;
  return isTTY && env['TERM'] !== 'dumb';
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
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    readFile: (p) => readInput(p),
    color: colorFromEnv(env, !!process.stdout.isTTY),
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
      if (p in files) return files[p]!;
      return readInput(p, () => stdin);
    },
    color: false,
    env: {} as Record<string, string | undefined>,
  };
  return io;
}

/**
 * Prints an error the way every command does and returns its exit code: usage errors exit 2,
 * input errors (unreadable files, bad manifests, refused rules) exit 1; anything else is a bug and
 * is thrown on. `formatError` renders a {@link NetfilterSimError} when the command knows better
 * (its source text, its file name); by default each diagnostic is a line, with its position.
 */
export function reportCliError(e: unknown, io: CliIO, command: string, formatError?: (e: NetfilterSimError) => string): number {
  if (e instanceof UsageError) {
    io.stderr(usageMessage(command, e.message));
    return EXIT_USAGE;
  }
  if (isParseArgsError(e)) {
    io.stderr(usageMessage(command, parseArgsMessage(e)));
    return EXIT_USAGE;
  }
  if (e instanceof SourceError) {
    io.stderr(e.format());
    return EXIT_INPUT;
  }
  if (e instanceof FileReadError) {
    io.stderr(`netfilter-sim ${command}: ${e.message}\n`);
    return EXIT_INPUT;
  }
  if (e instanceof NetfilterSimError) {
    io.stderr(
      formatError
        ? formatError(e)
        : e.diagnostics.map((d) => (d.span ? formatDiagnostic(d, undefined, '<input>') : `netfilter-sim ${command}: ${d.message}`) + '\n').join(''),
    );
    return EXIT_INPUT;
  }
  const err = e as NodeJS.ErrnoException | undefined;
  if (err && typeof err.code === 'string' && typeof err.path === 'string') {
    io.stderr(`netfilter-sim ${command}: cannot read ${err.path}: ${err.code}\n`);
    return EXIT_INPUT;
  }
  throw e;
}
