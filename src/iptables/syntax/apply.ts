/**
 * Applies `iptables`/`ip6tables` command lines (as generators execute them) to a rule set, with
 * the kernel's outcome for each.
 *
 * @module
 */
import { diagnostic, NetfilterSimError } from '../../model/errors.js';
import type { Family, Ruleset } from '../../model/types.js';
import { RulesetBuilder, isTableName } from './builder.js';
import { parseIptablesArgv } from './command.js';
import { expectArgument } from '../../model/guard.js';

/** Options for {@link applyIptablesCommands}. */
export interface ApplyOptions {
  readonly family: Family;
  readonly mode?: 'strict' | 'lenient';
}

/**
 * Runs each command (the argument vector after the `iptables` binary name, e.g.
 * `['-t', 'nat', '-A', 'OUTPUT', '-j', 'PROXY_INIT_OUTPUT']`) against the rule set and returns
 * the result. Throws a `NetfilterSimError` at the first command that iptables would refuse,
 * with `commandIndex` in the message.
 *
 * @example
 * ```ts
 * const rs = applyIptablesCommands(undefined, [['-t', 'nat', '-N', 'X'], ['-t', 'nat', '-A', 'X', '-j', 'RETURN']], { family: 4 });
 * ```
 */
export function applyIptablesCommands(initial: Ruleset | undefined, commands: readonly (readonly string[])[], options: ApplyOptions): Ruleset {
  expectArgument(initial, ['object', 'undefined'], 'initial');
  expectArgument(commands, 'array', 'commands');
  expectArgument(options, 'object', 'options');
  const builder = new RulesetBuilder(options.family, initial);
  commands.forEach((argv, index) => {
    let cmd;
    try {
      cmd = parseIptablesArgv(argv, { family: options.family, mode: options.mode ?? 'lenient', text: argv.join(' ') });
    } catch (e) {
      if (e instanceof NetfilterSimError) throw new NetfilterSimError(e.diagnostics.map((d) => ({ ...d, message: `command ${index + 1} (${argv.join(' ')}): ${d.message}` })));
      throw e;
    }
    const table = cmd.table ?? 'filter';
    if (!isTableName(table)) throw new NetfilterSimError(diagnostic('UNKNOWN_TABLE', `command ${index + 1}: table "${table}" does not exist`, undefined, table));
    const refusal = builder.apply(cmd, table);
    if (refusal) throw new NetfilterSimError({ ...refusal, message: `command ${index + 1} (${argv.join(' ')}): ${refusal.message}` });
  });
  return builder.build();
}
