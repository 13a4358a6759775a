/**
 * What the real `iptables`/`ip6tables` 1.8.9 answers to the argument vectors proxy-init builds:
 * success, or its exit status and message. Only the shapes proxy-init emits are modelled (`-N`,
 * `-F`, `-A` with the matches and targets of `pkg/iptables/iptables.go`); every message below was
 * captured from iptables-legacy and iptables-nft 1.8.9 in a network namespace.
 *
 * @internal
 * @module
 */

/**
 * The iptables release whose messages are reproduced.
 * @internal
 *
 * @example
 * ```ts
 * `iptables v${IPTABLES_VERSION} (legacy): …`
 * ```
 */
export const IPTABLES_VERSION = '1.8.9';

/**
 * The back end a binary name stands for. `iptables`/`ip6tables` are assumed to be nft (Debian's default).
 * @internal
 *
 * @example
 * ```ts
 * backendOf('ip6tables-legacy'); // 'legacy'
 * ```
 */
export function backendOf(bin: string): 'legacy' | 'nf_tables' {
  return /legacy/.test(bin) ? 'legacy' : 'nf_tables';
}

/**
 * What a failing command printed and returned.
 * @internal
 *
 * @example
 * ```ts
 * runIptablesCommand(4, 'iptables-nft', ['-t', 'nat', '-F', 'X'], natStateFromSave(undefined));
 * // { exitCode: 1, stderr: 'iptables: No chain/target/match by that name.\n' }
 * ```
 */
export interface IptablesFailure {
  readonly exitCode: number;
  readonly stderr: string;
}

/**
 * The state the model needs: the chains of the nat table.
 * @internal
 *
 * @example
 * ```ts
 * natStateFromSave(existing).chains.has('PROXY_INIT_OUTPUT');
 * ```
 */
export interface NatState {
  readonly chains: Set<string>;
}

/**
 * The nat table's built-in chains.
 * @internal
 *
 * @example
 * ```ts
 * NAT_BUILTIN_CHAINS.includes('PREROUTING'); // true
 * ```
 */
export const NAT_BUILTIN_CHAINS: readonly string[] = ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'];

/**
 * The `*nat` section of `iptables-save` text (what `iptables-save -t nat` would print), or the
 * whole text when it names no table.
 * @internal
 *
 * @example
 * ```ts
 * natSection('*filter\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n'); // '*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n'
 * ```
 */
export function natSection(text: string): string {
  const lines = text.split('\n');
  if (!lines.some((l) => l.startsWith('*'))) return text;
  const out: string[] = [];
  let inNat = false;
  for (const line of lines) {
    if (line.startsWith('*')) inNat = line.trim() === '*nat';
    if (inNat) out.push(line);
    if (inNat && line.trim() === 'COMMIT') inNat = false;
  }
  return out.length ? out.join('\n') + '\n' : '';
}

/**
 * The nat chains declared by save text (plus the built-ins).
 * @internal
 *
 * @example
 * ```ts
 * natStateFromSave(undefined).chains; // Set { 'PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING' }
 * ```
 */
export function natStateFromSave(text: string | undefined): NatState {
  const chains = new Set(NAT_BUILTIN_CHAINS);
  if (text !== undefined) {
    for (const m of natSection(text).matchAll(/^:(\S+)/gm)) chains.add(m[1]!);
  }
  return { chains };
}

function parameterProblem(family: 4 | 6, bin: string, message: string): IptablesFailure {
  const prog = family === 4 ? 'iptables' : 'ip6tables';
  return {
    exitCode: 2,
    stderr: `${prog} v${IPTABLES_VERSION} (${backendOf(bin)}): ${message}\nTry \`${prog} -h' or '${prog} --help' for more information.\n`,
  };
}

function kernelProblem(family: 4 | 6, message: string): IptablesFailure {
  return { exitCode: 1, stderr: `${family === 4 ? 'iptables' : 'ip6tables'}: ${message}\n` };
}

// xtables_strtoui(s, NULL, &v, 0, max): strtoul base 0 (0x hex, leading 0 octal), whole string.
function strtoui(s: string, max: number): number | undefined {
  let v: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(s)) v = parseInt(s.slice(2), 16);
  else if (/^0[0-7]*$/.test(s)) v = s.length > 1 ? parseInt(s.slice(1), 8) : 0;
  else if (/^[1-9][0-9]*$/.test(s)) v = Number(s);
  else return undefined;
  return v <= max ? v : undefined;
}

function isIpv4Literal(s: string): boolean {
  // __numeric_to_ipaddr: 1–4 dot-separated C integers 0..255 (shorter forms are networks).
  const parts = s.split('.');
  if (parts.length > 4 || s.length === 0) return false;
  return parts.every((p) => strtoui(p, 255) !== undefined);
}

function isIpv6Literal(s: string): boolean {
  // inet_pton(AF_INET6): hex groups, one "::", an optional dotted-quad tail.
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return false;
  const dbl = s.split('::');
  if (dbl.length > 2) return false;
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const head = groups(dbl[0]!);
  const tail = dbl.length === 2 ? groups(dbl[1]!) : [];
  const all = [...head, ...tail];
  let count = 0;
  for (let i = 0; i < all.length; i++) {
    const g = all[i]!;
    if (g.includes('.')) {
      if (i !== all.length - 1 || !/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(g)) return false;
      if (g.split('.').some((o) => Number(o) > 255 || (o.length > 1 && o[0] === '0'))) return false;
      count += 2;
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return false;
      count += 1;
    }
  }
  return dbl.length === 2 ? count < 8 : count === 8;
}

/**
 * Checks one address option value as `xtables_ipparse_multiple` / `xtables_ip6parse_multiple`
 * do: the mask first (`strtoul(…, 0)`, so `/010` is 8 and `/08` an error), a zero mask skips the
 * host, then the host must be numeric for the family (a name lookup would fail in a pod).
 * Returns iptables' message, or `undefined` when accepted.
 * @internal
 *
 * @example
 * ```ts
 * checkAddressOption(6, '10.0.0.0/8'); // "host/network `10.0.0.0' not found"
 * checkAddressOption(6, '0.0.0.0/0');  // undefined: a zero mask skips the host
 * ```
 */
export function checkAddressOption(family: 4 | 6, text: string): string | undefined {
  for (const item of text.split(',')) {
    const slash = item.lastIndexOf('/');
    const host = slash >= 0 ? item.slice(0, slash) : item;
    const mask = slash >= 0 ? item.slice(slash + 1) : undefined;
    let bits = family === 4 ? 32 : 128;
    if (mask !== undefined) {
      if (family === 4 && mask.split('.').length === 4 && isIpv4Literal(mask)) {
        bits = -1; // a dotted mask
      } else if (family === 6 && isIpv6Literal(mask)) {
        bits = -1;
      } else {
        const b = strtoui(mask, family === 4 ? 32 : 128);
        if (b === undefined) return `invalid mask \`${mask}' specified`;
        bits = b;
      }
    }
    if (bits === 0) continue;
    const ok = family === 4 ? isIpv4Literal(host) : isIpv6Literal(host);
    if (!ok) return `host/network \`${host}' not found`;
  }
  return undefined;
}

function checkPort(s: string): boolean {
  return strtoui(s, 65535) !== undefined;
}

/**
 * Runs one proxy-init command (argv after the binary) against the nat state, as iptables would:
 * option errors first (exit 2), then the kernel's answer (exit 1). On success the state is
 * updated and `undefined` is returned.
 * @internal
 *
 * @example
 * ```ts
 * const state = natStateFromSave(undefined);
 * runIptablesCommand(4, 'iptables-legacy', ['-t', 'nat', '-N', 'PROXY_INIT_OUTPUT'], state); // undefined (created)
 * runIptablesCommand(4, 'iptables-legacy', ['-t', 'nat', '-N', 'PROXY_INIT_OUTPUT'], state); // { exitCode: 1, stderr: 'iptables: Chain already exists.\n' }
 * ```
 */
export function runIptablesCommand(
  family: 4 | 6,
  bin: string,
  argv: readonly string[],
  state: NatState,
): IptablesFailure | undefined {
  let command: 'N' | 'F' | 'A' | 'X' | undefined;
  let chain: string | undefined;
  const addresses: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    switch (a) {
      case '-N': case '-F': case '-A': case '-X':
        command = a.slice(1) as 'N' | 'F' | 'A' | 'X';
        chain = next;
        i++;
        break;
      case '-s': case '-d':
        if (next !== undefined) addresses.push(next);
        i++;
        break;
      case '--dports':
        if (next === undefined || next === '' || !next.split(',').every((p) => p.split(':').every(checkPort))) {
          return parameterProblem(family, bin, `invalid port/service \`${next ?? ''}' specified`);
        }
        i++;
        break;
      case '--destination-port': case '--dport':
        if (next === undefined || !checkPort(next)) {
          return parameterProblem(family, bin, `invalid port/service \`${next ?? ''}' specified`);
        }
        i++;
        break;
      case '--uid-owner': case '--gid-owner':
        if (next === undefined || strtoui(next, 4294967294) === undefined) {
          return parameterProblem(family, bin, `owner: Bad value for "${a}" option: "${next ?? ''}"`);
        }
        i++;
        break;
      case '-t': case '-p': case '-j': case '-m': case '--match': case '--comment': case '-o': case '-i':
      case '--to-port': case '--to-ports':
        i++;
        break;
      default:
        break;
    }
  }
  for (const addr of addresses) {
    const problem = checkAddressOption(family, addr);
    if (problem) return parameterProblem(family, bin, problem);
  }
  if (chain === undefined) return undefined;
  switch (command) {
    case 'N':
      if (state.chains.has(chain)) return kernelProblem(family, 'Chain already exists.');
      state.chains.add(chain);
      return undefined;
    case 'F':
    case 'A':
      if (!state.chains.has(chain)) return kernelProblem(family, 'No chain/target/match by that name.');
      return undefined;
    case 'X':
      if (!state.chains.has(chain)) return kernelProblem(family, 'No chain/target/match by that name.');
      state.chains.delete(chain);
      return undefined;
    default:
      return undefined;
  }
}
