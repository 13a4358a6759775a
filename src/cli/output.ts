/**
 * What the CLI does around every command: `-o`/`--output` as a kubectl-style alias of the output
 * flags, the refusal of output flags that disagree, and the safety of what goes to standard error
 * (control characters from the input escaped, a suggestion for a mistyped flag).
 * @internal
 */
import { suggest } from '../iptables/syntax/command.js';
import { UsageError } from './io.js';

/** How a command selects its output: what `--json` means and what `-o VALUE` becomes. */
interface OutputFlags {
  /** Whether `-o` is free (the compilers keep `-o` for the component's own flag). */
  readonly short: boolean;
  /** What `--json` selects (`--format json` on commands where they are the same). */
  readonly json: string;
  /** The `-o` values and the flags they stand for. */
  readonly values: Readonly<Record<string, readonly string[]>>;
}

const TRACE_VALUES = {
  json: ['--json'],
  text: ['--format', 'text'],
  tree: ['--format', 'tree'],
  mermaid: ['--format', 'mermaid'],
  dot: ['--format', 'dot'],
} as const;
const COMPILE: OutputFlags = {
  short: false,
  json: 'json',
  values: { save: ['--format', 'save'], restore: ['--format', 'restore'], commands: ['--format', 'commands'], json: ['--json'] },
};

/** Per command (`compile linkerd` for a compiler, `cluster connect` for a cluster command), its output flags. */
const OUTPUTS: ReadonlyMap<string, OutputFlags> = new Map([
  ['fmt', { short: true, json: 'json', values: { json: ['--json'], text: [] } }],
  ['check', { short: true, json: 'json', values: { json: ['--json'], text: [] } }],
  ['version', { short: true, json: 'json', values: { json: ['--json'], text: [] } }],
  // `--json` is the result object; `--format json` the trace's events: two different outputs.
  ['connect', { short: true, json: 'result', values: TRACE_VALUES }],
  ['trace', { short: true, json: 'result', values: TRACE_VALUES }],
  ['mesh', { short: true, json: 'json', values: { json: ['--json'], text: ['--format', 'text'], mermaid: ['--format', 'mermaid'], dot: ['--format', 'dot'] } }],
  ['cluster connect', { short: true, json: 'result', values: TRACE_VALUES }],
  ['cluster reach', { short: true, json: 'json', values: { json: ['--json'], text: [] } }],
  ['cluster rules', { short: true, json: 'json', values: { save: ['--format', 'save'], nft: ['--format', 'nft'] } }],
  ['compile linkerd', COMPILE],
  ['compile linkerd-cni', COMPILE],
  ['compile istio', COMPILE],
  ['compile istio-cni', COMPILE],
]);

/** The key of {@link OUTPUTS} for a command line: the command, and for `compile` its mesh. */
function outputKey(command: string, args: readonly string[]): string {
  return (command === 'compile' || command === 'cluster') && args[0] !== undefined ? `${command} ${args[0]}` : command;
}

/** The command a usage error of {@link resolveOutputFlags} names (`compile linkerd` for a compiler). */
export function outputCommand(command: string, args: readonly string[]): string {
  const key = outputKey(command, args);
  return OUTPUTS.has(key) ? key : command;
}

/**
 * Rewrites `-o VALUE` / `--output VALUE` (also `-oVALUE`, `--output=VALUE`) into the command's
 * own output flags, and refuses output flags that select different outputs (`--json --format
 * tree`, `-o json --format dot`, `--format text --format dot`) with a {@link UsageError}.
 * Arguments after `--` are left alone; commands without output flags get their arguments back.
 */
export function resolveOutputFlags(command: string, args: readonly string[]): string[] {
  const spec = OUTPUTS.get(outputKey(command, args));
  if (spec === undefined) return [...args];
  const out: string[] = [];
  const chosen: { flag: string; output: string }[] = [];
  const pick = (value: string, flag: string): void => {
    const flags = spec.values[value];
    if (flags === undefined || !Object.hasOwn(spec.values, value)) {
      throw new UsageError(`${flag} is ${Object.keys(spec.values).join(', ')}, not "${value}"`);
    }
    out.push(...flags);
    chosen.push({ flag: `${flag} ${value}`, output: flags[0] === '--json' ? spec.json : (flags[1] ?? 'text') });
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    const inline = a.startsWith('--') && eq > 0 ? a.slice(eq + 1) : undefined;
    if (name === '--output' || (spec.short && name === '-o')) {
      const value = inline ?? args[++i];
      if (value === undefined) throw new UsageError(`${name} needs a value (${Object.keys(spec.values).join(', ')})`);
      pick(value, name);
    } else if (spec.short && /^-o[^-]/.test(a)) {
      pick(a.slice(2), '-o');
    } else if (name === '--json' && inline === undefined) {
      out.push(a);
      chosen.push({ flag: '--json', output: spec.json });
    } else if (name === '--format') {
      const value = inline ?? args[i + 1];
      out.push(a);
      if (inline === undefined && value !== undefined) out.push(args[++i]!);
      if (value !== undefined) chosen.push({ flag: `--format ${value}`, output: value });
    } else {
      out.push(a);
    }
  }
  const outputs = new Set(chosen.map((c) => c.output));
  if (outputs.size > 1) {
    const flags = [...new Set(chosen.map((c) => c.flag))];
    throw new UsageError(`conflicting output flags: ${flags.join(', ')} (choose one output)`);
  }
  return out;
}

/**
 * Escapes the control characters of `text` (a CRLF file's `\r`, an escape sequence in a file
 * name), keeping newlines and tabs, so that an error message cannot move the cursor, rewrite the
 * line or change the terminal. `\r` becomes `\r`, others `\xHH` (`\u{HHHH}` above 0xff).
 */
export function escapeControl(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/gu, (c) => {
    if (c === '\r') return '\\r';
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/**
 * Adds "did you mean" to the option parser's message about an unknown flag, given the flags the
 * command knows (from its help text).
 */
export function suggestFlag(message: string, known: () => readonly string[]): string {
  return message.replace(/Unknown option '(-{1,2}[^'\s=]+)'(?![^\n]*did you mean)/, (whole, flag: string) => {
    if (!flag.startsWith('--')) return whole;
    return `${whole}${suggest(flag, known().filter((k) => k.startsWith('--')))}`;
  });
}

/**
 * The flags a help text lists (`--long` and `-s`), in order of appearance: those of its `Usage:`
 * line and of its option rows (an indented line starting with `-`: its columns that start with
 * `-`, up to the description, so that flags named in a description are not taken).
 */
export function flagsOfHelp(help: string): string[] {
  const flags = new Set<string>();
  for (const line of help.split('\n')) {
    let part = '';
    if (/^Usage:/.test(line)) part = line;
    else if (/^\s+-/.test(line)) {
      const columns = line.trim().split(/ {2,}/);
      const end = columns.findIndex((c) => !c.startsWith('-'));
      part = columns.slice(0, end < 0 ? columns.length : end).join(' ');
    }
    for (const m of part.matchAll(/(?<![\w-])(--[a-z0-9][a-z0-9-]*|-[a-zA-Z0-9])(?![\w-])/g)) flags.add(m[1]!);
  }
  return [...flags];
}
