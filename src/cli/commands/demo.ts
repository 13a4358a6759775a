/**
 * `netfilter-sim demo`: the main job on built-in defaults.
 * @internal
 */
import { LINKERD_DEFAULT_RULES } from '../../examples/linkerd-default.js';
import { formatIptablesSave } from '../../fmt.js';
import { EXIT_OK, type CliIO } from '../io.js';

export async function runDemo(_args: string[], io: CliIO): Promise<number> {
  io.stdout('# linkerd-init default rules, as iptables-save prints them once loaded\n');
  io.stdout(formatIptablesSave(LINKERD_DEFAULT_RULES));
  return EXIT_OK;
}
