/**
 * `netfilter-sim version [--json]`
 * @internal
 */
import { parseArgs } from 'node:util';
import { EXIT_OK, UsageError, type CliIO } from '../io.js';

/** The iptables release whose behaviour the simulator reproduces. */
export const MODELLED_IPTABLES = '1.8.9';

export function versionHelp(version: string): string {
  return `Usage: netfilter-sim version [--json | -o json|text]

Prints the version (${version}), as "netfilter-sim --version" does. With --json: the version,
the iptables release whose behaviour is modelled and the Node.js version, for bug reports.

Exit status: 0 ok, 2 usage.
`;
}

export async function runVersion(args: string[], io: CliIO, version: string): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    io.stdout(versionHelp(version));
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new UsageError(`version takes no arguments, not "${positionals[0]}"`);
  io.stdout(values.json ? JSON.stringify({ version, iptables: MODELLED_IPTABLES, node: process.version }, null, 2) + '\n' : `${version}\n`);
  return EXIT_OK;
}
