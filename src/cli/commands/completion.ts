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
  readonly subcommands: readonly CommandInfo[];
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
  return { name: path[path.length - 1]!, summary, flags: flagsOfHelp(help.out), subcommands };
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

function bash(tree: readonly CommandInfo[]): string {
  const names = tree.map((c) => c.name);
  const cases = tree.map((c) => {
    if (c.subcommands.length === 0) return `    ${c.name}) flags="${words(flagsOf(c))}" ;;`;
    const subs = c.subcommands.map((s) => `        ${s.name}) flags="${words(flagsOf(s))}" ;;`).join('\n');
    return `    ${c.name})
      flags="${words(flagsOf(c))}"
      [ "$COMP_CWORD" -eq 2 ] && cmds="${words(c.subcommands.map((s) => s.name))}"
      case "$sub" in
${subs}
      esac ;;`;
  });
  return `# bash completion for netfilter-sim: source <(netfilter-sim completion bash)
_netfilter_sim() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmd="\${COMP_WORDS[1]}" sub="\${COMP_WORDS[2]}"
  local cmds="" flags=""
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
  if [[ "$cur" == -* ]]; then
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
    if (c.subcommands.length === 0) return `    ${c.name}) flags=(${words(flagsOf(c))}) ;;`;
    const subs = c.subcommands.map((s) => `        ${s.name}) flags=(${words(flagsOf(s))}) ;;`).join('\n');
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
  local -a cmds cmds_d flags
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
  if [[ $PREFIX == -* ]]; then
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
  const flagArgs = (f: string): string => (f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`);
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
      for (const f of flagsOf(s)) lines.push(`complete -c netfilter-sim -n '${inCmd}; and __fish_seen_subcommand_from ${s.name}' ${flagArgs(f)}`);
    }
    for (const f of flagsOf(c)) lines.push(`complete -c netfilter-sim -n '${inCmd}' ${flagArgs(f)}`);
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
