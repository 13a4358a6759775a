/**
 * `netfilter-sim compile linkerd|linkerd-cni|istio|istio-cni …`
 * @internal
 */
import { EXIT_OK, EXIT_USAGE, UsageError, type CliIO } from '../io.js';
import { COMPILE_LINKERD_CNI_HELP, COMPILE_LINKERD_HELP, runCompileLinkerd, runCompileLinkerdCni } from './compile-linkerd.js';
import { COMPILE_ISTIO_AMBIENT_HELP, COMPILE_ISTIO_CNI_HELP, COMPILE_ISTIO_HELP, runCompileIstio, runCompileIstioAmbient, runCompileIstioCni } from './compile-istio.js';

type Sub = { run: (args: string[], io: CliIO) => Promise<number>; help: string; summary: string };

const SUBS: Record<string, Sub> = {
  linkerd: { run: runCompileLinkerd, help: COMPILE_LINKERD_HELP, summary: 'the rules linkerd-init (proxy-init) writes' },
  'linkerd-cni': { run: runCompileLinkerdCni, help: COMPILE_LINKERD_CNI_HELP, summary: 'the rules the linkerd-cni plugin writes for a pod' },
  istio: { run: runCompileIstio, help: COMPILE_ISTIO_HELP, summary: 'the rules istio-init (istio-iptables) writes' },
  'istio-cni': { run: runCompileIstioCni, help: COMPILE_ISTIO_CNI_HELP, summary: 'the rules the istio-cni plugin writes for a pod' },
  'istio-ambient': { run: runCompileIstioAmbient, help: COMPILE_ISTIO_AMBIENT_HELP, summary: "the rules istio-cni's ambient node agent writes (in a pod, or --host)" },
};

export function compileHelp(): string {
  const w = Math.max(...Object.keys(SUBS).map((k) => k.length));
  return `Usage: netfilter-sim compile <mesh> [options] [--format save|restore|commands|json] [--json]

From the same inputs the real components take, print the rules they write.
--json is the same as --format json.

Meshes:
${Object.entries(SUBS).map(([k, v]) => `  ${k.padEnd(w)}  ${v.summary}`).join('\n')}

Run "netfilter-sim compile <mesh> --help" for its options and examples.
Exit status: 0 ok, 1 the component would fail (its error on stderr) or a file is bad, 2 usage.

Examples:
  netfilter-sim compile linkerd -p 4143 -o 4140 -u 2102 --ipv6=false
  netfilter-sim compile istio -p 15001 -z 15006 -u 1337 -m REDIRECT -i '*' -b '*' --format restore
`;
}

/** Registers another compiler (used while wiring optional meshes). */
export function registerCompiler(name: string, sub: Sub): void {
  SUBS[name] = sub;
}

export async function runCompile(args: string[], io: CliIO): Promise<number> {
  const [mesh, ...rest] = args;
  if (mesh === undefined) {
    io.stderr(compileHelp());
    return EXIT_USAGE;
  }
  if (mesh === '--help' || mesh === '-h' || mesh === 'help') {
    io.stdout(compileHelp());
    return EXIT_OK;
  }
  const sub = Object.hasOwn(SUBS, mesh) ? SUBS[mesh] : undefined;
  if (!sub) throw new UsageError(`unknown mesh "${mesh}" (one of: ${Object.keys(SUBS).join(', ')})`);
  return sub.run(rest, io);
}
