/**
 * What a CLI command may touch: its output streams and the file system, passed in so that tests
 * can run commands in-process.
 * @internal
 */
import { closeSync, openSync, readSync, readdirSync, statSync, writeSync } from 'node:fs';
import { MAX_INPUT_BYTES } from '../model/limits.js';
import { NetfilterSimError, type Diagnostic } from '../model/errors.js';
import { formatDiagnostic } from '../model/diagnostic-text.js';

export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Reads a file, or standard input for `-`. */
  readonly readFile: (path: string) => string;
  /** The names in a directory (sorted), or null when the path is not a directory. */
  readonly listDir?: (path: string) => string[] | null;
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
  // "--uid -1": parseArgs takes "-1" for an option and calls the argument ambiguous.
  const ambiguous = /^Option '(-[^']*)' argument is ambiguous/.exec(e.message);
  if (ambiguous) {
    const flag = ambiguous[1]!.split(', ').pop()!;
    return `${flag} needs a value, and the next argument starts with "-"; numbers here are never negative (write ${flag}=VALUE for a value that starts with "-")`;
  }
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

/** A file or standard input longer than {@link MAX_INPUT_BYTES}. Exits 1. */
export class InputTooLargeError extends Error {
  readonly path: string;
  constructor(path: string, limit: number) {
    super(`${path === '-' ? 'standard input' : path} is larger than ${limit} bytes (${limit / (1024 * 1024)} MiB), the most netfilter-sim reads from one input`);
    this.name = 'InputTooLargeError';
    this.path = path;
  }
}

/**
 * Reads a file descriptor to its end in 64 KiB pieces, stopping past `limit` bytes, so that an
 * endless input (`/dev/zero`, a pipe that never closes with data) ends in an error rather than
 * exhausting memory.
 */
export function readBounded(fd: number, path: string, limit: number = MAX_INPUT_BYTES): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const piece = Buffer.allocUnsafe(1 << 16);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, piece, 0, piece.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    total += n;
    if (total > limit) throw new InputTooLargeError(path, limit);
    chunks.push(Buffer.from(piece.subarray(0, n)));
  }
  return Buffer.concat(chunks, total);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Decodes UTF-8 (a byte-order mark is kept, so the parsers can name it). Invalid sequences become
 * U+FFFD, but `warn` is told where the first one is, so that a rule printed back with a replacement
 * character is not a silent change.
 */
export function decodeInput(bytes: Uint8Array, path: string, warn?: (message: string) => void): string {
  try {
    return utf8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    let line = 1;
    for (let i = 0; i < at; i++) if (bytes[i] === 10) line++;
    warn?.(`${path === '-' ? '<stdin>' : path}:${line}: invalid UTF-8 (first at byte ${at}); each bad sequence is read as U+FFFD`);
    return utf8Lenient.decode(bytes);
  }
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    let n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined || (d & 0xc0) !== 0x80) return i;
      // overlongs, surrogates and code points past U+10FFFF
      if (k === 1 && ((c === 0xe0 && d < 0xa0) || (c === 0xed && d > 0x9f) || (c === 0xf0 && d < 0x90) || (c === 0xf4 && d > 0x8f))) return i;
    }
    i += n + 1;
  }
  return b.length;
}

/**
 * Reads a file, or standard input for `-`, turning any failure into a {@link FileReadError}, and
 * input past {@link MAX_INPUT_BYTES} into an {@link InputTooLargeError}.
 */
export function readInput(path: string, stdin?: () => string, warn?: (message: string) => void): string {
  let fd: number | undefined;
  try {
    if (path === '-' && stdin) return stdin();
    fd = path === '-' ? 0 : openSync(path, 'r');
    return decodeInput(readBounded(fd, path), path, warn);
  } catch (e) {
    if (e instanceof InputTooLargeError) throw e;
    throw new FileReadError(path, e);
  } finally {
    if (fd !== undefined && fd !== 0) closeSync(fd);
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

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes to a file descriptor before returning. `process.stdout.write` queues what a slow reader
 * (a pipe to `less`, a CI log) has not taken yet, so large output (JSON written in pieces) would
 * pile up in memory; waiting here keeps memory bounded.
 */
function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      if (code === 'EPIPE') process.exit(0);
      throw e;
    }
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
  return {
    stdout: (t) => writeAll(1, t),
    stderr: (t) => void process.stderr.write(t),
    readFile: (p) => readInput(p, undefined, (m) => void process.stderr.write(`netfilter-sim: warning: ${m}\n`)),
    listDir: diskDir,
    color: colorFromEnv(env, !!process.stdout.isTTY),
    env,
  };
}

/** The names in a directory of the file system, sorted; null when the path is not a directory. */
function diskDir(path: string): string[] | null {
  if (path === '-') return null;
  try {
    if (!statSync(path).isDirectory()) return null;
    return readdirSync(path).sort();
  } catch {
    return null;
  }
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
    listDir: (p: string) => {
      // Files given in memory under `DIR/NAME` make DIR a directory; otherwise the disk decides.
      const prefix = p.replace(/\/+$/, '') + '/';
      const names = Object.keys(files).filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)).filter((n) => n !== '' && !n.includes('/'));
      return names.length > 0 ? names.sort() : diskDir(p);
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
  if (e instanceof FileReadError || e instanceof InputTooLargeError) {
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
