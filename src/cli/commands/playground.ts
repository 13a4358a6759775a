/**
 * `netfilter-sim playground [--port N] [--dir DIR]`: serves the built playground page on
 * 127.0.0.1 with Node's own `http`. The page runs the simulator in the browser; this server only
 * hands out its files.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { EXIT_INPUT, EXIT_OK, UsageError, type CliIO } from '../io.js';

/** `playground --help`. @internal */
export const PLAYGROUND_HELP = `Usage: netfilter-sim playground [--port N] [--dir DIR]

Serves the playground, a page that runs netfilter-sim in the browser, on 127.0.0.1 and prints
its URL. Paste rules, pick a connection, see its path; explore, mesh and compile too. The page
sends nothing anywhere: its state lives in the URL fragment, so a link reproduces the view.
The installed package ships the page; in a clone, "npm run playground" builds it into
playground/dist/.

  --port N     the port (default 4173; 0 picks a free one)
  --dir DIR    serve this build of the page instead of playground/dist/

Ctrl+C stops the server. Exit status: 0 stopped, 1 the page is not built or the port is taken,
2 usage error.

Examples:
  netfilter-sim playground
  netfilter-sim playground --port 0
`;

/** The build next to this module: dist/cli/commands/ (or src/cli/commands/) → playground/dist/. */
const DEFAULT_DIR = resolve(fileURLToPath(import.meta.url), '..', '..', '..', '..', 'playground', 'dist');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** What the page may do, also stated in its own meta tag: load from here, connect nowhere. */
const CSP = "default-src 'self'; script-src 'self'; worker-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'none'; form-action 'none'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'";

function send(res: ServerResponse, status: number, body: string | Buffer, type: string, head: boolean, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Content-Security-Policy': CSP,
    ...extra,
  });
  res.end(head ? undefined : body);
}

/** The file a request names inside `root`, or null (outside it, absent, or not a file). */
function fileFor(root: string, url: string): string | null {
  let path: string;
  try {
    path = decodeURIComponent(new URL(url, 'http://x').pathname);
  } catch {
    return null;
  }
  if (path.includes('\0') || path.split('/').includes('..')) return null;
  let file = join(root, path);
  if (path.endsWith('/')) file = join(file, 'index.html');
  if (!existsSync(file)) return null;
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return null;
  }
  if (real !== root && !real.startsWith(root + sep)) return null;
  return statSync(real).isFile() ? real : null;
}

function handler(root: string, port: () => number) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      send(res, 405, 'only GET and HEAD\n', 'text/plain; charset=utf-8', false, { Allow: 'GET, HEAD' });
      return;
    }
    // Only this machine's names for this server: a page elsewhere cannot reach it through a DNS name that points here.
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port()}` && host !== `localhost:${port()}`) {
      send(res, 421, 'wrong host\n', 'text/plain; charset=utf-8', head);
      return;
    }
    const file = fileFor(root, req.url ?? '/');
    if (file === null) {
      send(res, 404, 'not found\n', 'text/plain; charset=utf-8', head);
      return;
    }
    send(res, 200, readFileSync(file), TYPES[extname(file)] ?? 'application/octet-stream', head);
  };
}

/**
 * Runs `netfilter-sim playground ARGS`: resolves with 0 once the server has stopped (SIGINT or
 * SIGTERM), 1 when the page is not built or the port is taken, 2 on a usage error.
 *
 * @example
 * ```ts
 * await runPlayground(['--port', '0'], processIO()); // prints http://127.0.0.1:PORT/
 * ```
 */
export async function runPlayground(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { port: { type: 'string' }, dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  if (values.help) {
    io.stdout(PLAYGROUND_HELP);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const portText = values.port ?? '4173';
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) throw new UsageError(`--port needs a port from 0 to 65535, not "${portText}"`);
  const dir = resolve(values.dir ?? DEFAULT_DIR);
  if (!existsSync(join(dir, 'index.html'))) {
    const shown = values.dir ?? dir;
    io.stderr(`netfilter-sim playground: the page is not built (no index.html in ${shown}): run "npm run playground" in a clone of netfilter-sim${values.dir === undefined ? ', or give --dir DIR' : ''}\n`);
    return EXIT_INPUT;
  }
  const root = realpathSync(dir);
  let bound = 0;
  const server = createServer(handler(root, () => bound));
  const listening = await new Promise<NodeJS.ErrnoException | null>((done) => {
    server.once('error', (e: NodeJS.ErrnoException) => done(e));
    server.listen(Number(portText), '127.0.0.1', () => done(null));
  });
  if (listening) {
    io.stderr(`netfilter-sim playground: cannot listen on 127.0.0.1:${portText}: ${listening.code === 'EADDRINUSE' ? 'the port is in use (--port N, or --port 0 for a free one)' : listening.message}\n`);
    return EXIT_INPUT;
  }
  const address = server.address();
  bound = typeof address === 'object' && address !== null ? address.port : Number(portText);
  io.stdout(`http://127.0.0.1:${bound}/\n`);
  io.stderr(`netfilter-sim playground: serving ${root} on 127.0.0.1 only; the page sends nothing anywhere. Ctrl+C stops.\n`);
  return new Promise<number>((done) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      server.close(() => done(EXIT_OK));
      server.closeAllConnections();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
