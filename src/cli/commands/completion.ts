/**
 * `netfilter-sim completion bash|zsh|fish`: shell completion scripts, derived from the command
 * table and each command's help (its flags, and the subcommands its help names), so a new
 * command, mesh or flag is completed without touching this file.
 * @internal
 */
import { EXIT_OK, UsageError, type CliIO } from '../io.js';
import { flagsOfHelp } from '../output.js';

/** A command as completion sees it. */
export interface CommandInfo {
  readonly name: string;
  readonly summary: string;
  readonly flags: readonly string[];
  /** The words a flag takes, where its help names them (`--syntax iptables|nft`). */
  readonly values?: Readonly<Record<string, readonly string[]>>;
  readonly subcommands: readonly CommandInfo[];
}

const WORD = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * The values each flag takes, as its help writes them: `--syntax iptables|nft`,
 * `--ambient [client|server]`, `-o json|text` after the flag, or a placeholder (`--format FMT`)
 * whose description starts with the choices: `text | tree (default) | json | mermaid | dot`.
 */
export function valuesOfHelp(help: string): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  const add = (flag: string, words: readonly string[]): void => {
    if (words.length < 2 || !words.every((w) => WORD.test(w)) || out[flag] !== undefined) return;
    out[flag] = [...words];
  };
  for (const line of help.split('\n')) {
    for (const m of line.matchAll(/(?<![\w-])(--[a-z0-9][a-z0-9-]*|-[a-zA-Z0-9])[ =]\[?([a-z0-9][a-z0-9._-]*(?:\|[a-z0-9][a-z0-9._-]*)+)\]?(?![\w|:-])/g)) add(m[1]!, m[2]!.split('|'));
    const placeholder = /^\s+(?:-[a-zA-Z0-9], )?(--[a-z0-9][a-z0-9-]*) [A-Z]+ {2,}(.*)$/.exec(line);
    if (placeholder) {
      const words = placeholder[2]!.replace(/\([^)]*\)/g, '').split('|').map((w) => w.trim());
      if (words.length > 1) add(placeholder[1]!, words.map((w, i) => (i === words.length - 1 ? w.split(/\s/)[0]! : w)));
    }
  }
  return out;
}

/** Runs `netfilter-sim PATH… --help`: its exit status and standard output. */
export type HelpOf = (path: readonly string[]) => Promise<{ readonly code: number; readonly out: string }>;

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

export const COMPLETION_HELP = `Usage: netfilter-sim completion bash|zsh|fish

Prints a completion script for the shell: commands, the meshes of compile and mesh, and every
command's flags (FILE arguments complete as file names).

  bash   source <(netfilter-sim completion bash)        (e.g. in ~/.bashrc)
  zsh    source <(netfilter-sim completion zsh)         (e.g. in ~/.zshrc, after compinit)
  fish   netfilter-sim completion fish > ~/.config/fish/completions/netfilter-sim.fish

Exit status: 0 ok, 2 usage.
`;

/** Subcommand names a help text offers: its `a|b` after the command in `Usage:`, and `  name  summary` rows. */
function candidates(help: string, path: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const usage = new RegExp(`^Usage: netfilter-sim ${path.join(' ')} ([a-z][a-z0-9-]*(?:\\|[a-z][a-z0-9-]*)+)(?:\\s|$)`, 'm').exec(help);
  for (const name of usage?.[1]!.split('|') ?? []) out.set(name, '');
  for (const m of help.matchAll(/^ {2}([a-z][a-z0-9-]*) {2,}(\S.*)$/gm)) if (!out.get(m[1]!)) out.set(m[1]!, m[2]!);
  return out;
}

async function describe(path: readonly string[], summary: string, helpOf: HelpOf, depth: number): Promise<CommandInfo> {
  const help = await helpOf(path);
  const subcommands: CommandInfo[] = [];
  if (depth > 0) {
    for (const [name, sub] of candidates(help.out, path)) {
      // A name is a subcommand when `PATH NAME --help` works.
      if ((await helpOf([...path, name])).code === EXIT_OK) subcommands.push(await describe([...path, name], sub, helpOf, depth - 1));
    }
  }
  const values = valuesOfHelp(help.out);
  return { name: path[path.length - 1]!, summary, flags: flagsOfHelp(help.out), ...(Object.keys(values).length > 0 ? { values } : {}), subcommands };
}

/** A subcommand's values, with those of its command's help it does not spell out (compile's --format). */
function inherit(parent: CommandInfo, sub: CommandInfo): Readonly<Record<string, readonly string[]>> {
  const out: Record<string, readonly string[]> = { ...(sub.values ?? {}) };
  for (const [flag, words] of Object.entries(parent.values ?? {})) if (out[flag] === undefined && sub.flags.includes(flag)) out[flag] = words;
  return out;
}

/** The commands of the table, with their flags and subcommands (one level down). */
export async function commandTree(commands: readonly { readonly name: string; readonly summary: string }[], helpOf: HelpOf): Promise<CommandInfo[]> {
  const out: CommandInfo[] = [];
  for (const c of commands) out.push(await describe([c.name], c.summary, helpOf, 1));
  return out;
}

const TOP_FLAGS = ['--help', '--version'];
const words = (xs: readonly string[]): string => xs.join(' ');
const flagsOf = (c: CommandInfo): readonly string[] => [...new Set([...c.flags, '--help'])];

/** bash: `vals` for the word before the cursor, when it is a flag that takes named values. */
function bashValues(values: Readonly<Record<string, readonly string[]>> | undefined): string {
  const entries = Object.entries(values ?? {});
  if (entries.length === 0) return '';
  return ` case "$prev" in ${entries.map(([f, w]) => `${f}) vals="${words(w)}" ;;`).join(' ')} esac;`;
}

/** zsh: the same, into the array `vals`. */
function zshValues(values: Readonly<Record<string, readonly string[]>> | undefined): string {
  const entries = Object.entries(values ?? {});
  if (entries.length === 0) return '';
  return ` case $words[CURRENT-1] in ${entries.map(([f, w]) => `${f}) vals=(${words(w)}) ;;`).join(' ')} esac;`;
}

function bash(tree: readonly CommandInfo[]): string {
  const names = tree.map((c) => c.name);
  const cases = tree.map((c) => {
    if (c.subcommands.length === 0) return `    ${c.name}) flags="${words(flagsOf(c))}";${bashValues(c.values)} ;;`;
    const subs = c.subcommands.map((s) => `        ${s.name}) flags="${words(flagsOf(s))}";${bashValues(inherit(c, s))} ;;`).join('\n');
    return `    ${c.name})
      flags="${words(flagsOf(c))}"
      [ "$COMP_CWORD" -eq 2 ] && cmds="${words(c.subcommands.map((s) => s.name))}"
      case "$sub" in
${subs}
      esac ;;`;
  });
  return `# bash completion for netfilter-sim: source <(netfilter-sim completion bash)
_netfilter_sim() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="\${COMP_WORDS[1]}" sub="\${COMP_WORDS[2]}"
  local cmds="" flags="" vals=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    cmds="${words([...names, 'help'])}"
    flags="${words(TOP_FLAGS)}"
  elif [ "$cmd" = help ]; then
    [ "$COMP_CWORD" -eq 2 ] && cmds="${words(names)}"
  else
    case "$cmd" in
${cases.join('\n')}
    esac
  fi
  if [ -n "$vals" ]; then
    COMPREPLY=($(compgen -W "$vals" -- "$cur"))
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ -n "$cmds" ]; then
    COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
  else
    COMPREPLY=()
  fi
}
complete -o default -F _netfilter_sim netfilter-sim
`;
}

/** A zsh `compadd -d` pair: names and "name  -- summary" lines. */
function zshArray(name: string, cs: readonly CommandInfo[]): string {
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  return `${name}=(${cs.map((c) => q(c.name)).join(' ')}); ${name}_d=(${cs.map((c) => q(`${c.name} -- ${c.summary}`)).join(' ')})`;
}

function zsh(tree: readonly CommandInfo[]): string {
  const cases = tree.map((c) => {
    if (c.subcommands.length === 0) return `    ${c.name}) flags=(${words(flagsOf(c))});${zshValues(c.values)} ;;`;
    const subs = c.subcommands.map((s) => `        ${s.name}) flags=(${words(flagsOf(s))});${zshValues(inherit(c, s))} ;;`).join('\n');
    return `    ${c.name})
      flags=(${words(flagsOf(c))})
      (( CURRENT == 3 )) && { ${zshArray('cmds', c.subcommands)} }
      case $words[3] in
${subs}
      esac ;;`;
  });
  return `#compdef netfilter-sim
# zsh completion for netfilter-sim: source <(netfilter-sim completion zsh)
_netfilter_sim() {
  local -a cmds cmds_d flags vals
  if (( CURRENT == 2 )); then
    ${zshArray('cmds', [...tree, { name: 'help', summary: 'help on a command', flags: [], subcommands: [] }])}
    flags=(${words(TOP_FLAGS)})
  elif [[ $words[2] == help ]]; then
    (( CURRENT == 3 )) && { ${zshArray('cmds', tree)} }
  else
    case $words[2] in
${cases.join('\n')}
    esac
  fi
  if (( \${#vals} )); then
    compadd -a vals
  elif [[ $PREFIX == -* ]]; then
    compadd -a flags
  elif (( \${#cmds} )); then
    compadd -l -d cmds_d -a cmds
  else
    _files
  fi
}
if [[ $funcstack[1] == _netfilter_sim ]]; then _netfilter_sim "$@"; else compdef _netfilter_sim netfilter-sim; fi
`;
}

function fish(tree: readonly CommandInfo[]): string {
  const q = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const flagArgs = (f: string, values?: Readonly<Record<string, readonly string[]>>): string => {
    const named = values?.[f];
    return `${f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`}${named ? ` -x -a ${q(words(named))}` : ''}`;
  };
  const lines = ['# fish completion for netfilter-sim: netfilter-sim completion fish > ~/.config/fish/completions/netfilter-sim.fish'];
  lines.push(`complete -c netfilter-sim -n __fish_use_subcommand -f -a help -d ${q('help on a command')}`);
  for (const f of TOP_FLAGS) lines.push(`complete -c netfilter-sim -n __fish_use_subcommand ${flagArgs(f)}`);
  lines.push(`complete -c netfilter-sim -n '__fish_seen_subcommand_from help' -f -a ${q(words(tree.map((c) => c.name)))}`);
  for (const c of tree) {
    lines.push(`complete -c netfilter-sim -n __fish_use_subcommand -f -a ${c.name} -d ${q(c.summary)}`);
    const subs = words(c.subcommands.map((s) => s.name));
    const inCmd = `__fish_seen_subcommand_from ${c.name}`;
    for (const s of c.subcommands) {
      lines.push(`complete -c netfilter-sim -n '${inCmd}; and not __fish_seen_subcommand_from ${subs}' -f -a ${s.name} -d ${q(s.summary)}`);
      const values = inherit(c, s);
      for (const f of flagsOf(s)) lines.push(`complete -c netfilter-sim -n '${inCmd}; and __fish_seen_subcommand_from ${s.name}' ${flagArgs(f, values)}`);
    }
    for (const f of flagsOf(c)) lines.push(`complete -c netfilter-sim -n '${inCmd}' ${flagArgs(f, c.values)}`);
  }
  return lines.join('\n') + '\n';
}

/** The completion script of `shell` for the command tree. */
export function completionScript(shell: Shell, tree: readonly CommandInfo[]): string {
  return shell === 'bash' ? bash(tree) : shell === 'zsh' ? zsh(tree) : fish(tree);
}

export async function runCompletion(args: string[], io: CliIO, tree: () => Promise<CommandInfo[]>): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(COMPLETION_HELP);
    return EXIT_OK;
  }
  const [shell, ...extra] = args;
  if (shell === undefined) throw new UsageError('which shell? netfilter-sim completion bash|zsh|fish');
  if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`unknown shell "${shell}" (one of: ${SHELLS.join(', ')})`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  io.stdout(completionScript(shell as Shell, await tree()));
  return EXIT_OK;
}
