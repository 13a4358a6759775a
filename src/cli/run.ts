/**
 * The CLI's command table and error handling. `main.ts` only calls {@link run}.
 * @internal
 */
import { NetfilterSimError, formatDiagnostic } from '../errors.js';
import { runCheck } from './commands/check.js';
import { runCompile } from './commands/compile.js';
import { runConnect } from './commands/connect.js';
import { runDemo } from './commands/demo.js';
import { runTrace } from './commands/trace.js';
import { runFmt } from './commands/fmt.js';
import { runMesh } from './commands/mesh.js';
import { EXIT_INPUT, EXIT_USAGE, UsageError, type CliIO } from './io.js';

type Command = (args: string[], io: CliIO) => Promise<number>;

const COMMANDS: Record<string, { run: Command; summary: string }> = {
  check: { run: runCheck, summary: 'check a rule set as the kernel would load it (chains, loops, placement)' },
  compile: { run: runCompile, summary: 'print the rules a mesh component writes (linkerd, istio, …)' },
  connect: { run: runConnect, summary: 'simulate a TCP connection (or UDP datagram) through a pod\'s rules' },
  mesh: { run: runMesh, summary: 'a connection between two meshed pods, end to end: verdict, hops, diagnosis' },
  trace: { run: runTrace, summary: 'trace one packet through every hook it visits' },
  demo: { run: runDemo, summary: 'the main job on built-in defaults' },
  fmt: { run: runFmt, summary: 'print iptables-save text in canonical form' },
};

export const VERSION = '0.1.0';

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([k, v]) => `  ${k.padEnd(width)}  ${v.summary}`);
  return `netfilter-sim ${VERSION}: a userspace simulator of Linux iptables/netfilter

Usage: netfilter-sim <command> [options]

Commands:
${lines.join('\n')}

Run "netfilter-sim <command> --help" for a command's options and examples.
Exit status: 0 ok, 1 bad input (or a negative answer), 2 usage error.
`;
}

/** Runs the CLI with the given arguments (without `node` and the script name). */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(help());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version' || name === '-V') {
    io.stdout(VERSION + '\n');
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    io.stderr(`netfilter-sim: unknown command "${name}"\n\n${help()}`);
    return EXIT_USAGE;
  }
  try {
    return await cmd.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && 'code' in e && String((e as { code: unknown }).code).startsWith('ERR_PARSE_ARGS'))) {
      io.stderr(`netfilter-sim ${name}: ${e.message}\nRun "netfilter-sim ${name} --help" for usage.\n`);
      return EXIT_USAGE;
    }
    if (e instanceof NetfilterSimError) {
      for (const d of e.diagnostics) io.stderr(formatDiagnostic(d, undefined, name) + '\n');
      return EXIT_INPUT;
    }
    if (e instanceof Error && 'code' in e && (e as { code: unknown }).code === 'ENOENT') {
      io.stderr(`netfilter-sim ${name}: ${e.message}\n`);
      return EXIT_INPUT;
    }
    throw e;
  }
}
