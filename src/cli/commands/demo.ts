/**
 * `netfilter-sim demo` (what `npm start` runs): the main job on built-in defaults — a default
 * Linkerd client and server pod, the rules linkerd-init writes for them, a connection from the
 * client's app through both proxies to the server's app, traced and explained.
 * @internal
 */
import { demoLinkerd } from '../../mesh/index.js';
import { EXIT_OK, UsageError, type CliIO } from '../io.js';

/** `netfilter-sim demo --help`. @internal */
export const DEMO_HELP = `Usage: netfilter-sim demo

A Linkerd client and server pod, injected with the injector's defaults: the rules linkerd-init
writes for them, a connection from the client's application through both proxies to the
server's application, hop by hop with the rule that moved it, and the same client under
linkerd-cni without native sidecars, where an init container's connection is refused, with the
diagnosis. Takes no options; "npm start" runs it.

The same, piece by piece, on your own pods:
  netfilter-sim mesh linkerd --client web.yaml --server api.yaml [--cni] [--native-sidecars off]
  netfilter-sim mesh linkerd --json
`;

export async function runDemo(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(DEMO_HELP);
    return EXIT_OK;
  }
  if (args.length > 0) throw new UsageError(`demo takes no arguments (got "${args[0]}")`);
  io.stdout(demoLinkerd());
  return EXIT_OK;
}
