/**
 * `netfilter-sim demo` (what `npm start` runs): the main job on built-in defaults — a default
 * Linkerd client and server pod, the rules linkerd-init writes for them, a connection from the
 * client's app through both proxies to the server's app, traced and explained.
 * @internal
 */
import { demoLinkerd } from '../../mesh/scenario/index.js';
import { EXIT_OK, type CliIO } from '../io.js';

export async function runDemo(_args: string[], io: CliIO): Promise<number> {
  io.stdout(demoLinkerd());
  return EXIT_OK;
}
