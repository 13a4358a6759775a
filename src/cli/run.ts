/**
 * The CLI's command table and error handling. `main.ts` only calls {@link run}.
 * @internal
 */
import { suggest } from '../iptables/syntax/command.js';
import { runCheck } from './commands/check.js';
import { runCluster } from './commands/cluster.js';
import { runCompile } from './commands/compile.js';
import { runConnect } from './commands/connect.js';
import { runDemo } from './commands/demo.js';
import { runExplore } from './commands/explore.js';
import { runTrace } from './commands/trace.js';
import { runFmt } from './commands/fmt.js';
import { runMesh } from './commands/mesh.js';
import { runPlayground } from './commands/playground.js';
import { commandTree, runCompletion } from './commands/completion.js';
import { runVersion } from './commands/version.js';
import { EXIT_USAGE, type CliIO, memoryIO, reportCliError } from './io.js';
import { escapeControl, flagsOfHelp, outputCommand, resolveOutputFlags, suggestFlag } from './output.js';

type Command = (args: string[], io: CliIO) => Promise<number>;

const COMMANDS: Record<string, { run: Command; summary: string }> = {
  fmt: { run: runFmt, summary: 'print iptables-save text in canonical form, as iptables-save would' },
  check: { run: runCheck, summary: 'check a rule set as the kernel would load it (chains, loops, placement)' },
  connect: { run: runConnect, summary: 'simulate a TCP connection (or UDP datagram) through a pod\'s rules' },
  trace: { run: runTrace, summary: 'trace one packet through every hook it visits' },
  explore: { run: runExplore, summary: 'every connection, not samples: the exact classes of probes that share one outcome' },
  compile: { run: runCompile, summary: 'print the rules a mesh component writes (linkerd, istio, …)' },
  mesh: { run: runMesh, summary: 'a connection between two meshed pods, end to end: verdict, hops, diagnosis' },
  cluster: { run: runCluster, summary: "a cluster's nodes and pods on the path: connections, reachability, node rules" },
  playground: { run: runPlayground, summary: 'serve the playground: the simulator in a browser page, on 127.0.0.1' },
  demo: { run: runDemo, summary: 'a Linkerd client and server on built-in defaults, traced and explained' },
  version: { run: (args, io) => runVersion(args, io, VERSION), summary: 'print the version (--json: with the modelled iptables and Node.js)' },
  completion: { run: (args, io) => runCompletion(args, io, () => commandTree(commandList(), helpOf)), summary: 'print a shell completion script: bash, zsh or fish' },
};

/** The commands of the table, for completion. */
function commandList(): { name: string; summary: string }[] {
  return Object.entries(COMMANDS).map(([name, c]) => ({ name, summary: c.summary }));
}

/** What `netfilter-sim PATH… --help` prints (standard output) and its exit status. */
async function helpOf(path: readonly string[]): Promise<{ code: number; out: string }> {
  const io = memoryIO();
  const code = await run([...path, '--help'], io);
  return { code, out: io.out };
}

export const VERSION = '0.1.0';

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([k, v]) => `  ${k.padEnd(width)}  ${v.summary}`);
  return `netfilter-sim ${VERSION}: a userspace simulator of Linux iptables/netfilter

Usage: netfilter-sim <command> [options]

Commands:
${lines.join('\n')}

Run "netfilter-sim <command> --help" (or "netfilter-sim help <command>") for a command's options
and examples. FILE arguments accept - for standard input.
Exit status: 0 ok, 1 bad input (or a negative answer), 2 usage error.
Colour: only when standard output is a terminal and NO_COLOR is not set (FORCE_COLOR forces it).
`;
}

/**
 * Runs the CLI with the given arguments (without `node` and the script name). Standard error is
 * made safe on the way out: control characters from the input are escaped, and an unknown flag
 * gets a suggestion from the command's help.
 */
export async function run(argv: string[], outer: CliIO): Promise<number> {
  const [name, ...given] = argv;
  // The flags the command's help lists (its help is written before the command's first await).
  const known = (): string[] => {
    const help = memoryIO();
    if (name !== undefined && Object.hasOwn(COMMANDS, name)) void COMMANDS[name]!.run([...((name === 'compile' || name === 'cluster') && given[0] !== undefined ? [given[0]] : []), '--help'], help);
    return flagsOfHelp(help.out);
  };
  const io: CliIO = { ...outer, stderr: (t) => outer.stderr(escapeControl(suggestFlag(t, known))) };
  // `help compile istio` is `compile istio --help`.
  const topic = given[0];
  if (name === 'help' && topic !== undefined && Object.hasOwn(COMMANDS, topic)) return run([...given, '--help'], outer);
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    if (name === undefined) io.stderr(help());
    else io.stdout(help());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version' || name === '-V') {
    io.stdout(VERSION + '\n');
    return 0;
  }
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) {
    io.stderr(`netfilter-sim: unknown ${name.startsWith('-') ? 'option' : 'command'} "${name}"${suggest(name, name.startsWith('-') ? ['--help', '--version'] : Object.keys(COMMANDS))}\n\n${help()}`);
    return EXIT_USAGE;
  }
  let rest: string[];
  try {
    rest = resolveOutputFlags(name, given);
  } catch (e) {
    return reportCliError(e, io, outputCommand(name, given));
  }
  try {
    return await cmd.run(rest, io);
  } catch (e) {
    return reportCliError(e, io, name);
  }
}
