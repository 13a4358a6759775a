/**
 * Evaluation: parsed commands → the rule set the kernel holds, as nft's `evaluate.c` and the
 * kernel's transaction do it. Symbols take the type of what they are compared with, bitwise
 * operations fold into `(x & mask) ^ xor`, protocol context is tracked through a rule
 * (`conflicting protocols specified`), and commands that name missing tables, chains, sets or
 * objects are refused at their position.
 *
 * @module
 */
import { diagnostic, type Diagnostic, type ErrorCode } from '../model/errors.js';
import type { Span } from '../model/types.js';
import {
  BITMASK_TYPES, DatatypeError, L4_PROTOCOLS, SETTABLE_META, allOnes, ifnameWildcardBits, parseSymbol, selectorType, typeBits, typeByName,
  TYPE_DESCRIPTION,
} from './datatypes.js';
import type {
  NftAnonSet, NftBaseChain, NftChain, NftElement, NftFamily, NftFlowtable, NftHook, NftMapLookup, NftObject, NftPrefix,
  NftRange, NftRight, NftRule, NftRuleset, NftSelector, NftSet, NftSetRef, NftStatement, NftTable, NftType, NftValue, NftVerdict,
} from './model.js';
import type { RawBoundRule, RawChainSpec, RawCommand, RawElement, RawExpr, RawObjectSpec, RawOp, RawSetSpec, RawStatement } from './syntax/ast.js';

export { typeBits } from './datatypes.js';

class EvalError extends Error {
  readonly diag: Diagnostic;
  constructor(code: ErrorCode, message: string, span?: Span, token?: string) {
    super(message);
    this.diag = diagnostic(code, message, span, token);
  }
}

function fail(code: ErrorCode, message: string, span?: Span, token?: string): never {
  throw new EvalError(code, message, span, token);
}

const STD_PRIORITIES: readonly (readonly [string, number])[] = [
  ['raw', -300], ['mangle', -150], ['dstnat', -100], ['filter', 0], ['security', 50], ['srcnat', 100],
];
const BRIDGE_PRIORITIES: readonly (readonly [string, number])[] = [['dstnat', -300], ['filter', -200], ['out', 100], ['srcnat', 300]];

/** The standard priority names of a family (`std_prios`, `bridge_std_prios`). */
export function standardPriorities(family: NftFamily): readonly (readonly [string, number])[] {
  return family === 'bridge' ? BRIDGE_PRIORITIES : STD_PRIORITIES;
}

/** Whether nft uses a standard priority name at this hook of this family (`std_prio_family_hook_compat`). */
export function priorityNameFits(name: string, hook: NftHook, family: NftFamily = 'inet'): boolean {
  if (family === 'bridge') {
    if (name === 'dstnat') return hook === 'prerouting';
    if (name === 'filter') return true;
    if (name === 'out') return hook === 'output';
    if (name === 'srcnat') return hook === 'postrouting';
    return false;
  }
  const inetLike = family === 'ip' || family === 'ip6' || family === 'inet';
  if (name === 'filter') return true;
  if (!inetLike) return false;
  if (name === 'dstnat') return hook === 'prerouting';
  if (name === 'srcnat') return hook === 'postrouting';
  return true;
}

function parsePriority(raw: RawExpr, hook: NftHook, family: NftFamily): number {
  if (raw.t !== 'sym') return fail('BAD_VALUE', 'priority must be a number or a priority name', raw.span);
  if (/^-?[0-9]+$/.test(raw.text)) {
    const n = Number(raw.text);
    if (n < -2147483648 || n > 2147483647) fail('BAD_VALUE', `priority value ${raw.text} out of range`, raw.span, raw.text);
    return n;
  }
  const m = /^([a-z]+)(?: ([+-]) ([0-9]+))?$/.exec(raw.text);
  const std = m ? standardPriorities(family).find(([n]) => n === m[1]) : undefined;
  if (!m || !std || !priorityNameFits(std[0], hook, family)) fail('BAD_VALUE', `'${raw.text.split(' ')[0]}' is invalid priority in this context.`, raw.span, raw.text);
  const off = m[3] ? Number(m[3]) : 0;
  return std[1] + (m[2] === '-' ? -off : off);
}

/** Hooks each family has (`chain_hookname_lookup` per family). */
const FAMILY_HOOKS: Readonly<Record<NftFamily, readonly NftHook[]>> = {
  ip: ['prerouting', 'input', 'forward', 'output', 'postrouting'],
  ip6: ['prerouting', 'input', 'forward', 'output', 'postrouting'],
  inet: ['prerouting', 'input', 'forward', 'output', 'postrouting', 'ingress'],
  bridge: ['prerouting', 'input', 'forward', 'output', 'postrouting'],
  arp: ['input', 'output'],
  netdev: ['ingress', 'egress'],
};

interface MTable {
  family: NftFamily;
  name: string;
  handle: number;
  nextHandle: number;
  sets: MSet[];
  chains: MChain[];
  objects: NftObject[];
  flowtables: NftFlowtable[];
  dormant?: boolean;
  comment?: string;
  span?: Span;
}
interface MChain {
  name: string;
  handle: number;
  base?: NftBaseChain;
  rules: NftRule[];
  comment?: string;
  span?: Span;
  binding?: boolean;
}
interface MSet {
  name: string;
  handle: number;
  key: NftType[];
  keyBits: number[];
  data?: NftType;
  dataConcat?: NftType[];
  dataInterval?: boolean;
  flags: ('constant' | 'interval' | 'timeout' | 'dynamic')[];
  elements: NftElement[];
  comment?: string;
  size?: number;
  /** Declared by this file (not carried over from an earlier ruleset). */
  fresh?: boolean;
  span?: Span;
  typeofKey?: NftSelector[];
  typeofData?: NftSelector;
  timeout?: number;
  gcInterval?: number;
  policy?: 'performance' | 'memory';
  autoMerge?: boolean;
  stateful?: NftStatement[];
  meter?: boolean;
}

/** Protocol context through one rule (nft's `proto_ctx`). */
/** The raw expressions that read the packet (the rest are constants). */
const SELECTOR_RAW: ReadonlySet<string> = new Set(['sel', 'concat', 'binop']);

interface RuleContext {
  readonly family: NftFamily;
  readonly table: MTable;
  /** A set's or map's `typeof`: the expression only names a type, the kernel never evaluates it. */
  readonly declaration?: boolean;
  /** The network protocol (`arp` in arp tables). */
  l3?: 'ip' | 'ip6' | 'arp';
  l4?: number;
  /** The protocols of a match on a set of them (`meta l4proto { tcp, udp }`): a header of one conflicts with the others. */
  l4Set?: readonly number[];
  /** Every transport protocol the rule established, in order: nft refuses a header of any other. */
  l4Seen?: number[];
  /** Whether a `ct protocol` match fixed the connection's transport protocol. */
  ctProtocol?: boolean;
  /** Whether a vlan header is in force (a vlan field was matched). */
  vlan?: boolean;
  /** The value an `ether type` match of the rule fixed. */
  etherType?: bigint;
  /** The ICMP type a match of the rule fixed (nft's `th_dep.icmp.type`). */
  icmpType?: number;
  /** Dependencies nft adds in front of the statement being evaluated. */
  pending?: NftStatement[];
}

/** ICMP fields that exist only for some types, and the match nft adds for them (`icmp_dep`). */
const ICMP_DEPS: Readonly<Record<string, Readonly<Record<string, { readonly type: number; readonly values: readonly number[] }>>>> = {
  icmp: { id: { type: 8, values: [0, 8] }, sequence: { type: 8, values: [0, 8] }, gateway: { type: 5, values: [5] }, mtu: { type: 3, values: [3] } },
  icmpv6: {
    id: { type: 128, values: [128, 129] }, sequence: { type: 128, values: [128, 129] }, mtu: { type: 2, values: [2] },
    'max-delay': { type: 130, values: [130] }, 'parameter-problem': { type: 4, values: [4] },
  },
};

/** Reject codes by name (`icmp_code_type`, `icmpv6_code_type`, `icmpx_code_type`). */
const REJECT_CODES: Readonly<Record<string, readonly (readonly [string, number])[]>> = {
  icmp: [['net-unreachable', 0], ['host-unreachable', 1], ['prot-unreachable', 2], ['port-unreachable', 3], ['frag-needed', 4],
    ['net-prohibited', 9], ['host-prohibited', 10], ['admin-prohibited', 13]],
  icmpv6: [['no-route', 0], ['admin-prohibited', 1], ['addr-unreachable', 3], ['port-unreachable', 4], ['policy-fail', 5], ['reject-route', 6]],
  icmpx: [['no-route', 0], ['port-unreachable', 1], ['host-unreachable', 2], ['admin-prohibited', 3]],
};

const L4_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(L4_PROTOCOLS).map(([k, v]) => [v, k]));
/** The protocol context after a match on a set of transport protocols (`meta l4proto { tcp, udp }`). */
const ANY_L4 = -1;

/** The result of evaluating a file's commands. */
export interface NftEvaluation {
  readonly ruleset: NftRuleset;
  /** Evaluation errors (nft refuses the file before talking to the kernel). */
  readonly diagnostics: readonly Diagnostic[];
  /** What the kernel refuses when the transaction is committed. */
  readonly commitDiagnostics?: readonly Diagnostic[];
}

/** Options for {@link evaluateNftCommands}. */
export interface NftEvaluateOptions {
  /** A rule set already loaded (the namespace's state before this file). */
  readonly base?: NftRuleset;
  /**
   * The interfaces of the host, in ifindex order after `lo` (index 1): `iif`/`oif NAME` and
   * `device NAME` resolve against them, as nft resolves names when it reads them. Default:
   * a fresh network namespace, which has only `lo`.
   */
  readonly interfaces?: readonly string[];
}

/** Runs the commands in order against an empty (or given) rule set. Stops at the first error. */
export function evaluateNftCommands(commands: readonly RawCommand[], options: NftEvaluateOptions = {}): NftEvaluation {
  const ev = new Evaluator(options.base, options.interfaces);
  try {
    for (const c of commands) ev.command(c);
    return { ruleset: ev.result(), diagnostics: [], commitDiagnostics: ev.deferred };
  } catch (e) {
    if (e instanceof EvalError) return { ruleset: ev.result(), diagnostics: [e.diag] };
    throw e;
  }
}

class Evaluator {
  /** What the kernel refuses at commit: reported after every evaluation error, as nft does. */
  readonly deferred: Diagnostic[] = [];
  private tables: MTable[] = [];
  private nextTableHandle = 1;
  /** Interface names by index (1: `lo`). */
  private readonly ifaces: readonly string[];
  /** The number of the next anonymous chain (`__chainN`), and whether a rule of one is evaluated. */
  private nextBinding = 1;
  private inBinding = false;

  constructor(base?: NftRuleset, interfaces?: readonly string[]) {
    this.ifaces = ['lo', ...(interfaces ?? []).filter((n) => n !== 'lo')];
    if (base) {
      for (const t of base.tables) {
        const handles = [t.handle, ...t.sets.map((s) => s.handle), ...(t.objects ?? []).map((o) => o.handle), ...(t.flowtables ?? []).map((f) => f.handle),
          ...t.chains.flatMap((c) => [c.handle, ...c.rules.map((r) => r.handle)])];
        this.tables.push({
          family: t.family, name: t.name, handle: t.handle, nextHandle: Math.max(0, ...handles) + 1,
          sets: t.sets.map((s) => ({
            ...s, fresh: false, key: [...s.key], keyBits: s.key.map(typeBits), flags: [...s.flags], elements: [...s.elements],
            ...(s.dataConcat ? { dataConcat: [...s.dataConcat] } : {}), ...(s.typeofKey ? { typeofKey: [...s.typeofKey] } : {}),
            ...(s.stateful ? { stateful: [...s.stateful] } : {}),
          }) as MSet),
          chains: t.chains.map((c) => ({ ...c, rules: [...c.rules] }) as MChain),
          objects: [...(t.objects ?? [])], flowtables: [...(t.flowtables ?? [])],
          ...(t.dormant ? { dormant: true } : {}), ...(t.comment !== undefined ? { comment: t.comment } : {}), ...(t.span ? { span: t.span } : {}),
        });
        this.nextTableHandle = Math.max(this.nextTableHandle, t.handle + 1);
        for (const c of t.chains) {
          const n = c.binding ? /^__chain([0-9]+)$/.exec(c.name) : null;
          if (n) this.nextBinding = Math.max(this.nextBinding, Number(n[1]) + 1);
        }
      }
    }
  }

  private commitFail(code: ErrorCode, message: string, span?: Span, token?: string): void {
    this.deferred.push(diagnostic(code, message, span, token));
  }

  result(): NftRuleset {
    return {
      kind: 'nftables',
      tables: this.tables.map((t): NftTable => ({
        family: t.family, name: t.name, handle: t.handle,
        sets: t.sets.map((s): NftSet => ({
          name: s.name, handle: s.handle, key: s.key, ...(s.data ? { data: s.data } : {}), flags: s.flags, elements: s.elements,
          ...(s.comment !== undefined ? { comment: s.comment } : {}), ...(s.size !== undefined ? { size: s.size } : {}), ...(s.span ? { span: s.span } : {}),
          ...(s.dataConcat ? { dataConcat: s.dataConcat } : {}), ...(s.dataInterval ? { dataInterval: true } : {}),
          ...(s.typeofKey ? { typeofKey: s.typeofKey } : {}), ...(s.typeofData ? { typeofData: s.typeofData } : {}),
          ...(s.timeout !== undefined ? { timeout: s.timeout } : {}), ...(s.gcInterval !== undefined ? { gcInterval: s.gcInterval } : {}),
          ...(s.policy ? { policy: s.policy } : {}), ...(s.autoMerge ? { autoMerge: true } : {}), ...(s.stateful ? { stateful: s.stateful } : {}),
          ...(s.meter ? { meter: true } : {}),
        })),
        chains: t.chains.map((c): NftChain => ({
          name: c.name, handle: c.handle, ...(c.base ? { base: c.base } : {}), rules: c.rules,
          ...(c.comment !== undefined ? { comment: c.comment } : {}), ...(c.span ? { span: c.span } : {}), ...(c.binding ? { binding: true } : {}),
        })),
        ...(t.objects.length > 0 ? { objects: t.objects } : {}), ...(t.flowtables.length > 0 ? { flowtables: t.flowtables } : {}),
        ...(t.dormant ? { dormant: true } : {}),
        ...(t.comment !== undefined ? { comment: t.comment } : {}), ...(t.span ? { span: t.span } : {}),
      })),
    };
  }

  private findTable(family: NftFamily, name: string, span: Span): MTable {
    const t = this.tables.find((x) => x.family === family && x.name === name);
    if (!t) fail('UNKNOWN_TABLE', `No such file or directory; table '${name}' does not exist in family ${family}`, span, name);
    return t;
  }

  private findChain(t: MTable, name: string, span: Span): MChain {
    const c = chainNamed(t, name);
    if (!c) fail('UNKNOWN_CHAIN', `No such file or directory; chain '${name}' does not exist in table ${t.family} ${t.name}`, span, name);
    return c;
  }

  command(c: RawCommand): void {
    switch (c.c) {
      case 'ruleset':
        this.tables = c.family === undefined ? [] : this.tables.filter((t) => t.family !== c.family);
        return;
      case 'table': return this.tableCommand(c);
      case 'chain': return this.chainCommand(c);
      case 'set': return this.setCommand(c);
      case 'element': return this.elementCommand(c);
      case 'rule': return this.ruleCommand(c);
      case 'object': return this.objectCommand(c);
      case 'flowtable': return this.flowtableCommand(c);
    }
  }

  private tableCommand(c: Extract<RawCommand, { c: 'table' }>): void {
    const existing = c.handle !== undefined
      ? this.tables.find((x) => x.family === c.family && x.handle === c.handle)
      : this.tables.find((x) => x.family === c.family && x.name === c.table);
    switch (c.op) {
      case 'add': case 'create':
        if (existing) {
          if (c.op === 'create') { this.commitFail('CHAIN_EXISTS', `Could not process rule: File exists`, c.span, c.table); return; }
          if (c.comment !== undefined) existing.comment = c.comment;
          if (c.dormant) existing.dormant = true;
          return;
        }
        if (c.table.length > 255) fail('BAD_VALUE', 'table name too long', c.span, c.table);
        this.tables.push({
          family: c.family, name: c.table, handle: this.nextTableHandle++, nextHandle: 1, sets: [], chains: [], objects: [], flowtables: [],
          ...(c.comment !== undefined ? { comment: c.comment } : {}), ...(c.dormant ? { dormant: true } : {}), span: c.span,
        });
        return;
      case 'delete':
        if (!existing) { this.commitFail('UNKNOWN_TABLE', `Could not process rule: No such file or directory`, c.span, c.table); return; }
        this.tables = this.tables.filter((t) => t !== existing);
        return;
      case 'flush': {
        if (!existing) {
          this.commitFail('UNKNOWN_TABLE', 'Could not process rule: No such file or directory', c.span, c.table);
          return;
        }
        for (const ch of existing.chains) ch.rules = [];
        existing.chains = existing.chains.filter((ch) => !ch.binding);
        for (const s of existing.sets) s.elements = [];
        return;
      }
    }
  }

  private chainCommand(c: Extract<RawCommand, { c: 'chain' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const existing = c.handle !== undefined ? t.chains.find((x) => x.handle === c.handle) : chainNamed(t, c.chain);
    switch (c.op) {
      case 'add': case 'create': {
        if (c.chain.length > 255) fail('CHAIN_NAME_TOO_LONG', 'chain name too long', c.nameSpan, c.chain);
        const base = c.spec ? this.baseChain(t, c.spec) : undefined;
        if (existing) {
          if (c.op === 'create') { this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', c.span, c.chain); return; }
          if (base && existing.base && (base.type !== existing.base.type || base.hook !== existing.base.hook || base.priority !== existing.base.priority)) {
            this.commitFail('INVALID_HOOK', 'Could not process rule: Operation not supported (a base chain keeps its type, hook and priority)', c.span, c.chain);
            return;
          }
          if (base && !existing.base) {
            this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', c.nameSpan, c.chain);
            return;
          }
          if (base && existing.base) existing.base = { ...existing.base, policy: c.spec?.policy ? base.policy : existing.base.policy };
          if (c.spec?.comment !== undefined) existing.comment = c.spec.comment;
          return;
        }
        if (c.spec?.policy && !base) fail('BAD_POLICY', 'policy is only valid on base chains', c.spec.policy.span, c.spec.policy.policy);
        const chain: MChain = { name: c.chain, handle: t.nextHandle++, rules: [], span: c.nameSpan };
        if (base) chain.base = base;
        if (c.spec?.comment !== undefined) chain.comment = c.spec.comment;
        t.chains.push(chain);
        return;
      }
      case 'delete': {
        if (!existing) { this.commitFail('UNKNOWN_CHAIN', 'Could not process rule: No such file or directory', c.span, c.chain); return; }
        if (existing.rules.length > 0) { this.commitFail('CHAIN_IN_USE', 'Could not process rule: Device or resource busy', c.span, c.chain); return; }
        t.chains = t.chains.filter((x) => x !== existing);
        return;
      }
      case 'flush': {
        const ch = existing ?? this.findChain(t, c.chain, c.nameSpan);
        this.unbind(t, ch.rules);
        ch.rules = [];
        return;
      }
    }
  }

  private baseChain(t: MTable, spec: RawChainSpec): NftBaseChain | undefined {
    if (!spec.type) return undefined;
    const { type, hook } = spec.type;
    if (!FAMILY_HOOKS[t.family].includes(hook)) fail('BAD_VALUE', `unknown chain hook`, spec.type.hookSpan, hook);
    const priority = parsePriority(spec.type.priority, hook, t.family);
    let policy: 'accept' | 'drop' = 'accept';
    if (spec.policy) {
      if (spec.policy.policy !== 'accept' && spec.policy.policy !== 'drop') fail('BAD_POLICY', `syntax error, unexpected ${spec.policy.policy}, expecting accept or drop`, spec.policy.span, spec.policy.policy);
      policy = spec.policy.policy;
    }
    let devices: string[] | undefined;
    if (spec.type.devices) {
      devices = spec.type.devices.map((d) => {
        if (d.t !== 'sym') return fail('BAD_VALUE', 'a device name expected', d.span);
        if (d.text.length >= 16) fail('BAD_VALUE', 'Interface name too long', d.span, d.text);
        return d.text;
      });
    }
    const ingress = hook === 'ingress' || hook === 'egress';
    if (ingress && !devices) fail('BAD_VALUE', `Missing \`device' in this chain definition`, spec.type.span, hook);
    if (!ingress && devices) fail('BAD_VALUE', `This chain type cannot be bound to device`, spec.type.span, hook);
    // A base chain may name devices the host does not have: the kernel here (6.18) registers the
    // hook for when they appear. (Flowtables, below, still need theirs.)
    return { type, hook, priority, policy, ...(devices ? { devices: [...new Set(devices)] } : {}), ...(spec.offload ? { offload: true } : {}) };
  }

  // --- sets ---------------------------------------------------------------------------------

  private setCommand(c: Extract<RawCommand, { c: 'set' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const existing = c.handle !== undefined ? t.sets.find((s) => s.handle === c.handle) : t.sets.find((s) => s.name === c.name);
    switch (c.op) {
      case 'add': case 'create': {
        if (existing) {
          if (c.op === 'create') { this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', c.span, c.name); return; }
          if (c.spec?.elements) this.addElements(existing, c.spec.elements);
          return;
        }
        const spec = c.spec as RawSetSpec;
        if (c.name.length > 255) fail('BAD_VALUE', 'set name too long', c.nameSpan, c.name);
        const key: NftType[] = [];
        const keyBits: number[] = [];
        let typeofKey: NftSelector[] | undefined;
        if (spec.key) {
          for (const name of spec.key.types) {
            const st = typeByName(name);
            if (!st || st === 'verdict') fail('BAD_VALUE', `unknown datatype ${name}`, spec.key.span, name);
            key.push(st);
            keyBits.push(typeBits(st));
          }
        } else if (spec.typeofKey) {
          const ctx: RuleContext = { family: t.family, table: t, declaration: true };
          typeofKey = spec.typeofKey.exprs.map((e) => this.selectorExpr(e, ctx));
          for (const s of typeofKey) {
            const st = selectorType(s);
            key.push(st.type);
            keyBits.push(st.bits);
          }
        } else {
          fail('BAD_VALUE', `${c.map ? 'map' : 'set'} definition does not specify key`, c.nameSpan, c.name);
        }
        const set: MSet = { name: c.name, handle: t.nextHandle++, key, keyBits, flags: [], elements: [], span: c.nameSpan, ...(typeofKey ? { typeofKey } : {}) };
        if (c.map) {
          if (spec.data) {
            const types = spec.data.types.map((name) => {
              const dt = typeByName(name);
              if (!dt) fail('BAD_VALUE', `unknown datatype ${name}`, spec.data!.span, name);
              return dt;
            });
            set.data = types[0]!;
            if (types.length > 1) set.dataConcat = types.slice(1);
            if (spec.data.interval) set.dataInterval = true;
          } else if (spec.typeofData) {
            const ctx: RuleContext = { family: t.family, table: t, declaration: true };
            const d = this.selectorExpr(spec.typeofData.expr, ctx);
            set.typeofData = d;
            const parts = d.kind === 'concat' ? d.items.map(selectorType) : [selectorType(d)];
            set.data = parts[0]!.type;
            if (parts.length > 1) set.dataConcat = parts.slice(1).map((p) => p.type);
            if (spec.typeofData.interval) set.dataInterval = true;
          } else if (spec.objType) {
            set.data = spec.objType.type as NftType;
          } else {
            fail('BAD_VALUE', 'map definition does not specify data type', c.nameSpan, c.name);
          }
        }
        for (const f of spec.flags) {
          if (f.flag !== 'interval' && f.flag !== 'constant' && f.flag !== 'timeout' && f.flag !== 'dynamic') fail('UNEXPECTED_TOKEN', `syntax error, unexpected ${f.flag}`, f.span, f.flag);
          if (!set.flags.includes(f.flag)) set.flags.push(f.flag);
        }
        if (spec.comment !== undefined) set.comment = spec.comment;
        if (spec.size !== undefined) set.size = spec.size;
        if (spec.timeout !== undefined) {
          set.timeout = spec.timeout;
          if (!set.flags.includes('timeout')) set.flags.push('timeout');
        }
        if (spec.gcInterval !== undefined) set.gcInterval = spec.gcInterval;
        if (spec.policy !== undefined) set.policy = spec.policy;
        if (spec.autoMerge) {
          if (!set.flags.includes('interval')) fail('BAD_VALUE', 'auto-merge only works with interval sets', c.nameSpan, c.name);
          set.autoMerge = true;
        }
        if (spec.stateful && spec.stateful.length > 0) {
          const ctx: RuleContext = { family: t.family, table: t };
          set.stateful = spec.stateful.map((s) => this.statement(s, ctx));
        }
        set.fresh = true;
        t.sets.push(set);
        if (spec.elements) this.addElements(set, spec.elements);
        return;
      }
      case 'delete':
        if (!existing) { this.commitFail('UNKNOWN_CHAIN', 'Could not process rule: No such file or directory', c.span, c.name); return; }
        if (this.setInUse(t, existing.name)) { this.commitFail('CHAIN_IN_USE', 'Could not process rule: Device or resource busy', c.span, c.name); return; }
        t.sets = t.sets.filter((s) => s !== existing);
        return;
      case 'flush': {
        if (!existing) fail('UNKNOWN_CHAIN', `No such file or directory; set '${c.name}' does not exist`, c.nameSpan, c.name);
        existing.elements = [];
        return;
      }
    }
  }

  private setInUse(t: MTable, name: string): boolean {
    return t.chains.some((c) => c.rules.some((r) => r.statements.some((s) => JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)).includes(`"name":"${name}"`) || (s.kind === 'dynset' && s.set === name))));
  }

  private elementCommand(c: Extract<RawCommand, { c: 'element' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const set = t.sets.find((s) => s.name === c.name);
    if (!set) fail('UNKNOWN_CHAIN', `No such file or directory; did you mean set '${c.name}'?`, c.nameSpan, c.name);
    if (c.op === 'add' || c.op === 'create') this.addElements(set, c.elements, c.op === 'create');
    else {
      const ctx: RuleContext = { family: t.family, table: t };
      const gone = this.elements(c.elements, set, ctx, true);
      const goneKeys = new Set(gone.map(keyText));
      const before = set.elements.length;
      set.elements = set.elements.filter((e) => !goneKeys.has(keyText(e)));
      if (set.elements.length + gone.length > before) this.commitFail('RULE_NOT_FOUND', 'Could not process rule: No such file or directory', c.elements.span);
    }
  }

  private addElements(set: MSet, raw: RawExpr, create = false): void {
    const t = this.tables.find((x) => x.sets.includes(set))!;
    const ctx: RuleContext = { family: t.family, table: t };
    const elems = this.elements(raw, set, ctx)
      .map((e) => ({ ...e, key: e.key.map((k) => (k.kind === 'prefix' && k.length === k.value.bits && k.value.type !== 'ifname' ? k.value : k)) }));
    const spans = raw.t === 'set' ? raw.elements.map((e) => e.span) : [];
    elems.forEach((e, i) => {
      const interval = e.key.find((k) => k.kind !== 'value');
      if (!set.flags.includes('interval') && interval) {
        fail('BAD_VALUE', `You must add 'flags interval' to your ${set.data !== undefined ? 'map' : 'set'} declaration if you want to add ${interval.kind} elements`, spans[i] ?? raw.span);
      }
      if ((e.timeout !== undefined || e.expires !== undefined) && !set.flags.includes('timeout')) {
        fail('BAD_VALUE', 'set does not support timeouts', spans[i] ?? raw.span);
      }
      if (set.flags.includes('interval') && e.key.length === 1) {
        const [lo, hi] = bounds(e.key[0]!);
        for (const x of set.elements) {
          if (x.key.length !== 1) continue;
          const [xl, xh] = bounds(x.key[0]!);
          if (lo === xl && hi === xh) continue;
          if (lo <= xh && xl <= hi) {
            if (set.autoMerge) continue;
            fail('BAD_VALUE', 'conflicting intervals specified', spans[i] ?? raw.span);
          }
        }
      }
      const keys = keysOf(set);
      const k = keyText(e);
      const old = keys.get(k);
      let withStateful = set.stateful?.some((s) => s.kind === 'counter') && !e.counter ? { ...e, counter: { packets: 0, bytes: 0 } } : e;
      // The set's other stateful expressions, for an element written without its own.
      const others = set.stateful?.filter((s) => s.kind !== 'counter') ?? [];
      if (others.length > 0 && withStateful.stateful === undefined) withStateful = { ...withStateful, stateful: others };
      if (old === undefined) {
        keys.set(k, withStateful);
        set.elements.push(withStateful);
      } else if (create) {
        this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', spans[i] ?? raw.span);
      } else if (dataText(old) !== dataText(e)) {
        // nft_add_set_elem: the key is there with other data: EEXIST, even without NLM_F_EXCL.
        this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', spans[i] ?? raw.span);
      }
    });
    if (set.autoMerge && set.flags.includes('interval') && set.key.length === 1 && set.data === undefined) set.elements = mergeIntervals(set.elements);
  }

  /** A set's or map's elements; `keyOnly`: a map's elements may be named by key alone (`delete element`). */
  private elements(raw: RawExpr, set: MSet, ctx: RuleContext, keyOnly = false): NftElement[] {
    if (raw.t !== 'set') fail('BAD_VALUE', 'syntax error, expecting set', raw.span);
    return raw.elements.map((e) => this.element(e, set.key, set.keyBits, keyOnly && !e.data ? undefined : set.data, ctx, set.dataConcat, set.dataInterval));
  }

  private element(e: RawElement, key: readonly NftType[], keyBits: readonly number[], data: NftType | undefined, ctx: RuleContext,
    dataConcat?: readonly NftType[], dataInterval?: boolean): NftElement {
    const parts = e.key.t === 'concat' ? e.key.items : [e.key];
    // `*`, the catch-all element: it has no key, and matches what no other element matches.
    const catchAll = e.key.t === 'sym' && e.key.text === '*' && !e.key.quoted;
    if (!catchAll && parts.length !== key.length) fail('BAD_VALUE', `datatype mismatch, expected ${key.length > 1 ? 'concatenation' : key[0]}`, e.key.span);
    const k = catchAll ? [] : parts.map((p, i) => this.constant(p, key[i]!, keyBits[i]!, true));
    const stateful = (e.stateful ?? []).map((x) => this.statement(x, ctx));
    const extra = {
      ...(e.counter ? { counter: e.counter } : {}), ...(e.comment !== undefined ? { comment: e.comment } : {}),
      ...(stateful.length > 0 ? { stateful } : {}),
      ...(e.timeout !== undefined ? { timeout: e.timeout } : {}), ...(e.expires !== undefined ? { expires: e.expires } : {}),
    };
    if (data === undefined) {
      if (e.data) fail('BAD_VALUE', 'set element has data but the set is not a map', e.data.span);
      return { key: k, ...extra };
    }
    if (!e.data) fail('BAD_VALUE', 'map element needs data: KEY : VALUE', e.span);
    if (data === 'verdict') {
      if (e.data.t !== 'verdict') fail('BAD_VALUE', 'datatype mismatch, expected verdict', e.data.span);
      return { key: k, data: this.verdict(e.data, ctx), ...extra };
    }
    if (isObjectType(data)) {
      if (e.data.t !== 'sym') fail('BAD_VALUE', `an object name expected`, e.data.span);
      return { key: k, data: { kind: 'value', type: 'string', bits: 128, value: 0n, text: e.data.text }, ...extra };
    }
    if (dataConcat && dataConcat.length > 0) {
      const types = [data, ...dataConcat];
      const dparts = e.data.t === 'concat' ? e.data.items : [e.data];
      if (dparts.length !== types.length) fail('BAD_VALUE', 'datatype mismatch, expected concatenation', e.data.span);
      const items = dparts.map((p, i) => this.constant(p, types[i]!, typeBits(types[i]!), !!dataInterval));
      return { key: k, data: { kind: 'concat-value', items }, ...extra };
    }
    const v = this.constant(e.data, data, typeBits(data), !!dataInterval);
    if (v.kind !== 'value' && !dataInterval) fail('BAD_VALUE', 'map data must be a single value', e.data.span);
    return { key: k, data: v, ...extra };
  }

  private verdict(raw: Extract<RawExpr, { t: 'verdict' }>, ctx: RuleContext): NftVerdict {
    void ctx;
    return { kind: 'verdict', verdict: raw.verdict, ...(raw.chain !== undefined ? { chain: raw.chain } : {}) };
  }

  // --- objects and flowtables ---------------------------------------------------------------

  private objectCommand(c: Extract<RawCommand, { c: 'object' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const existing = c.handle !== undefined
      ? t.objects.find((o) => o.handle === c.handle && o.type === c.objType)
      : t.objects.find((o) => o.name === c.name && o.type === c.objType);
    if (c.op === 'delete') {
      if (!existing) { this.commitFail('UNKNOWN_CHAIN', 'Could not process rule: No such file or directory', c.span, c.name); return; }
      t.objects = t.objects.filter((o) => o !== existing);
      return;
    }
    if (c.name.length > 255) fail('BAD_VALUE', 'object name too long', c.nameSpan, c.name);
    const obj = this.objectOf(c, t);
    if (existing) {
      if (c.op === 'create') this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', c.span, c.name);
      return;
    }
    t.objects.push(obj);
  }

  private objectOf(c: Extract<RawCommand, { c: 'object' }>, t: MTable): NftObject {
    const spec: RawObjectSpec = c.spec ?? { type: 'counter', packets: 0, bytes: 0 };
    const base = { name: c.name, handle: t.nextHandle++, span: c.nameSpan, ...(spec.comment !== undefined ? { comment: spec.comment } : {}) };
    const l3 = (v: { value: string; span: Span } | undefined): 'ip' | 'ip6' | 'inet' => {
      const fam = v?.value ?? (t.family === 'ip6' ? 'ip6' : t.family === 'inet' ? 'inet' : 'ip');
      if (fam !== 'ip' && fam !== 'ip6' && fam !== 'inet') fail('BAD_VALUE', `l3proto ${fam}: only ip, ip6 and inet`, v?.span ?? c.span, fam);
      return fam;
    };
    switch (spec.type) {
      case 'counter': return { ...base, type: 'counter', packets: spec.packets, bytes: spec.bytes };
      case 'quota': return { ...base, type: 'quota', over: spec.over, bytes: spec.bytes, used: spec.used };
      case 'limit':
        if (spec.rate === 0) fail('BAD_VALUE', 'limit rate must be greater than 0', c.span);
        return { ...base, type: 'limit', rate: spec.rate, unit: spec.unit, over: spec.over, burst: spec.burst ?? (spec.bytes ? 0 : 5), ...(spec.bytes ? { bytes: true } : {}) };
      case 'ct helper': {
        if (!spec.helper) fail('BAD_VALUE', 'ct helper: missing "type"', c.nameSpan, c.name);
        if (spec.helper.name.length >= 16) fail('BAD_VALUE', 'helper name too long', spec.helper.span, spec.helper.name);
        if (t.family !== 'ip' && t.family !== 'ip6' && t.family !== 'inet') fail('BAD_VALUE', 'ct helpers are for ip, ip6 and inet tables', c.span);
        return { ...base, type: 'ct helper', helper: spec.helper.name, protocol: spec.helper.protocol as 'tcp', l3proto: l3(spec.l3proto) };
      }
      case 'ct timeout':
        if (!spec.protocol) fail('BAD_VALUE', 'ct timeout: missing protocol', c.nameSpan, c.name);
        return { ...base, type: 'ct timeout', protocol: spec.protocol, l3proto: l3(spec.l3proto), policy: this.timeoutPolicy(spec.protocol, spec.policy, spec.policySpan ?? c.span) };
      case 'ct expectation':
        if (!spec.protocol) fail('BAD_VALUE', 'ct expectation: missing protocol', c.nameSpan, c.name);
        return { ...base, type: 'ct expectation', protocol: spec.protocol, dport: spec.dport ?? 0, timeout: spec.timeout ?? 0, size: spec.size ?? 0, l3proto: l3(spec.l3proto) };
      case 'secmark': return { ...base, type: 'secmark', context: spec.context };
      case 'synproxy': return { ...base, type: 'synproxy', mss: spec.mss, wscale: spec.wscale, flags: spec.flags };
    }
  }

  /** `policy = { established: 100, … }`: states by protocol (`timeout_protocol` in ct.c). */
  private timeoutPolicy(protocol: string, policy: readonly (readonly [string, number])[], span: Span): [string, number][] {
    const states = protocol === 'tcp'
      ? ['syn_sent', 'syn_recv', 'established', 'fin_wait', 'close_wait', 'last_ack', 'time_wait', 'close', 'syn_sent2', 'retrans', 'unacknowledged']
      : ['unreplied', 'replied'];
    const out: [string, number][] = [];
    for (const [name, value] of policy) {
      if (!states.includes(name)) fail('BAD_VALUE', `Unknown state '${name}' for ${protocol}`, span, name);
      out.push([name, value]);
    }
    return out;
  }

  private flowtableCommand(c: Extract<RawCommand, { c: 'flowtable' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const existing = c.handle !== undefined ? t.flowtables.find((f) => f.handle === c.handle) : t.flowtables.find((f) => f.name === c.name);
    if (c.op === 'delete') {
      if (!existing) { this.commitFail('UNKNOWN_CHAIN', 'Could not process rule: No such file or directory', c.span, c.name); return; }
      t.flowtables = t.flowtables.filter((f) => f !== existing);
      return;
    }
    const spec = c.spec ?? {};
    if (existing) {
      if (c.op === 'create') this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', c.span, c.name);
      return;
    }
    if (!spec.hook) fail('BAD_VALUE', 'flowtable: missing hook', c.nameSpan, c.name);
    if (spec.hook.hook !== 'ingress') fail('BAD_VALUE', `unknown flowtable hook ${spec.hook.hook}`, spec.hook.span, spec.hook.hook);
    const priority = parsePriority(spec.hook.priority, 'ingress', 'netdev');
    const devices = (spec.devices ?? []).map((d) => (d.t === 'sym' ? d.text : fail('BAD_VALUE', 'a device name expected', d.span)));
    for (const d of devices) if (!this.ifaces.includes(d)) this.commitFail('INVALID_HOOK', `Could not process rule: No such file or directory (no device ${d})`, c.span, d);
    t.flowtables.push({
      name: c.name, handle: t.nextHandle++, hook: 'ingress', priority, devices, ...(spec.counter ? { counter: true } : {}), ...(spec.offload ? { offload: true } : {}), span: c.nameSpan,
    });
  }

  // --- constants ----------------------------------------------------------------------------

  /** A constant of a type: a value, a range or a prefix. */
  private constant(raw: RawExpr, type: NftType, bits: number, allowInterval: boolean): NftValue | NftRange | NftPrefix {
    if (raw.t === 'list' || (raw.t === 'binop' && BITMASK_TYPES.has(type))) {
      if (!BITMASK_TYPES.has(type)) fail('BAD_VALUE', `Could not parse ${TYPE_DESCRIPTION[type] ?? type}: a list of values is only valid for flags`, raw.span);
      return this.flags(raw, type, bits);
    }
    if (raw.t === 'binop') {
      const l = this.constant(raw.left, type, bits, false);
      const r = this.constant(raw.right, type, bits, false);
      if (l.kind !== 'value' || r.kind !== 'value') fail('BAD_VALUE', 'Binary operation on a range or prefix', raw.span);
      const ones = allOnes(bits);
      let v: bigint;
      switch (raw.op) {
        case '&': v = l.value & r.value; break;
        case '|': v = l.value | r.value; break;
        case '^': v = l.value ^ r.value; break;
        case '<<': v = (l.value << r.value) & ones; break;
        case '>>': v = l.value >> r.value; break;
      }
      return { ...l, value: v };
    }
    if (raw.t === 'range') {
      const lo = this.constant(raw.low, type, bits, false);
      const hi = this.constant(raw.high, type, bits, false);
      if (lo.kind !== 'value' || hi.kind !== 'value') fail('BAD_VALUE', 'Range bounds must be values', raw.span);
      if (lo.value > hi.value) fail('BAD_VALUE', 'Range has zero or negative size', raw.span);
      if (!allowInterval) fail('BAD_VALUE', 'Value must be a singleton', raw.span);
      return { kind: 'range', low: lo, high: hi };
    }
    if (raw.t === 'prefix') {
      const v = this.constant(raw.value, type, bits, false);
      if (v.kind !== 'value') fail('BAD_VALUE', 'Prefix of a range', raw.span);
      return this.prefixOf(v, raw.length, bits, raw.span, allowInterval);
    }
    if (raw.t !== 'sym') fail('BAD_VALUE', `syntax error, unexpected ${raw.t === 'set' ? 'set' : raw.t}, expecting value`, raw.span);
    const text = raw.text;
    const sym = (s: string): NftValue => {
      try {
        const v = parseSymbol(s, type, bits, raw.quoted);
        // nft lists an index by the name of the interface that has it, if one does.
        if (type === 'iface_index' && v.text === undefined) {
          const name = this.ifaces[Number(v.value) - 1];
          if (name !== undefined && v.value > 0n) return { ...v, text: name };
        }
        if (type === 'ct_label' && v.value >= 128n) fail('BAD_VALUE', `${s}: bit ${v.value} out of range (128 max)`, raw.span, raw.text);
        return v;
      } catch (e) {
        if (e instanceof DatatypeError) {
          if (type === 'iface_index') {
            const i = this.ifaces.indexOf(s);
            if (i >= 0) return { kind: 'value', type, bits, value: BigInt(i + 1), text: s };
          }
          fail('BAD_VALUE', e.message, raw.span, raw.text);
        }
        throw e;
      }
    };
    if (!raw.quoted && (type === 'ipv4_addr' || type === 'ipv6_addr' || type === 'mark' || type === 'devgroup' || type === 'realm' || type === 'integer' || type === 'xinteger') && text.includes('/')) {
      const [a, l] = text.split('/') as [string, string];
      const len = /^[0-9]+$/.test(l) ? Number(l) : NaN;
      if (!(len >= 0 && len <= bits)) fail('BAD_VALUE', `Could not parse prefix length: ${l}`, raw.span, text);
      return this.prefixOf(sym(a), len, bits, raw.span, allowInterval);
    }
    if (!raw.quoted && type !== 'ifname' && type !== 'string' && text.includes('-') && !/^-/.test(text)) {
      try {
        return parseSymbol(text, type, bits);
      } catch {
        const i = rangeSplit(text);
        if (i > 0) {
          const lo = sym(text.slice(0, i));
          const hi = sym(text.slice(i + 1));
          if (lo.value > hi.value) fail('BAD_VALUE', 'Range has zero or negative size', raw.span, text);
          if (!allowInterval) fail('BAD_VALUE', 'Value must be a singleton', raw.span, text);
          return { kind: 'range', low: lo, high: hi };
        }
      }
    }
    if (type === 'ifname' || type === 'string') {
      const v = sym(text);
      const wild = ifnameWildcardBits(v);
      if (wild === undefined) return v;
      // `eth*`: the names that start with `eth`, an interval of the key (a prefix of its bytes).
      if (!allowInterval) fail('BAD_VALUE', 'Value must be a singleton', raw.span, text);
      return { kind: 'prefix', value: v, length: wild };
    }
    return sym(text);
  }

  private prefixOf(v: NftValue, len: number, bits: number, span: Span, allowInterval: boolean): NftValue | NftPrefix {
    if (len > bits) fail('BAD_VALUE', `Could not parse prefix length: ${len}`, span);
    const mask = len === 0 ? 0n : allOnes(bits) ^ allOnes(bits - len);
    const value: NftValue = { ...v, value: v.value & mask };
    // A full-length prefix is one address, but it makes an anonymous set an interval set.
    if (len === bits && !allowInterval) return value;
    return { kind: 'prefix', value, length: len, ...(value.value !== v.value ? { hostBits: true } : {}) };
  }

  private flags(raw: RawExpr, type: NftType, bits: number): NftValue {
    if (raw.t === 'list') {
      let v = 0n;
      for (const i of raw.items) v |= this.flags(i, type, bits).value;
      return { kind: 'value', type, bits, value: v };
    }
    if (raw.t === 'binop') {
      if (raw.op !== '|') fail('BAD_VALUE', `Binary operation (${raw.op}) is undefined for ${type} types`, raw.span);
      return { kind: 'value', type, bits, value: this.flags(raw.left, type, bits).value | this.flags(raw.right, type, bits).value };
    }
    const c = this.constant(raw, type, bits, false);
    if (c.kind !== 'value') fail('BAD_VALUE', 'a flag value expected', raw.span);
    return c;
  }

  // --- rules ------------------------------------------------------------------------------

  private ruleCommand(c: Extract<RawCommand, { c: 'rule' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const chain = this.findChain(t, c.chain, c.chainSpan);
    if (c.op === 'delete') {
      const idx = chain.rules.findIndex((r) => r.handle === c.position!.value);
      if (idx < 0) { this.commitFail('RULE_NOT_FOUND', 'Could not process rule: No such file or directory', c.position!.span); return; }
      this.unbind(t, chain.rules.splice(idx, 1));
      return;
    }
    const ctx: RuleContext = {
      family: t.family, table: t,
      ...(t.family === 'ip' ? { l3: 'ip' as const } : t.family === 'ip6' ? { l3: 'ip6' as const } : t.family === 'arp' ? { l3: 'arp' as const } : {}),
    };
    const statements: NftStatement[] = [];
    let comment: string | undefined;
    let terminal = false;
    for (const s of c.statements) {
      if (s.t === 'comment') {
        comment = s.text;
        continue;
      }
      // rule_evaluate: verdicts (but continue), reject, NAT, queue and fwd end the rule.
      if (terminal) fail('BAD_VALUE', 'Statement after terminal statement has no effect', s.span);
      if ((s.t === 'verdict' && s.verdict !== 'continue') || s.t === 'reject' || s.t === 'nat' || s.t === 'queue' || s.t === 'fwd') terminal = true;
      const before = ctx.l3;
      const st = this.statement(s, ctx);
      if (ctx.pending && ctx.pending.length > 0) {
        statements.push(...ctx.pending);
        ctx.pending = [];
      }
      if (st.kind === 'reject' && st.with?.type === 'tcp-reset' && (ctx.family === 'inet' || ctx.family === 'bridge' || ctx.family === 'netdev') && ctx.l4 === undefined) {
        // A TCP reset needs TCP: nft puts the transport protocol at the start of the rule.
        statements.unshift({ kind: 'match', left: { kind: 'meta', key: 'l4proto' }, op: 'implicit', right: { kind: 'value', type: 'inet_proto', bits: 8, value: 6n } });
      }
      if (st.kind === 'reject' && (ctx.family === 'inet' || ctx.family === 'bridge' || ctx.family === 'netdev') && before === undefined && (st.with?.type === 'icmp' || st.with?.type === 'icmpv6')) {
        // nft puts the network protocol an icmp reject needs at the start of the rule.
        statements.unshift(l3Dependency(ctx.family, st.with.type === 'icmp' ? 'ip' : 'ip6'));
      }
      statements.push(st);
    }
    // Anonymous sets are objects of the table: each takes a handle before the rule does.
    for (const s of statements) t.nextHandle += countAnonSets(s);
    let position = chain.rules.length;
    if (c.position) {
      if (c.position.kind === 'index') {
        if (c.position.value > chain.rules.length) { this.commitFail('RULE_NOT_FOUND', `Could not process rule: No such file or directory`, c.position.span); return; }
        position = c.op === 'insert' ? c.position.value : c.position.value + 1;
        if (c.op === 'add' && c.position.value >= chain.rules.length) { this.commitFail('RULE_NOT_FOUND', `Could not process rule: No such file or directory`, c.position.span); return; }
      } else {
        const idx = chain.rules.findIndex((r) => r.handle === c.position!.value);
        if (idx < 0) { this.commitFail('RULE_NOT_FOUND', 'Could not process rule: No such file or directory', c.position.span); return; }
        if (c.op === 'replace') {
          const rule: NftRule = { handle: chain.rules[idx]!.handle, statements, ...(comment !== undefined ? { comment } : {}), span: c.span };
          this.unbind(t, [chain.rules[idx]!]);
          chain.rules[idx] = rule;
          return;
        }
        position = c.op === 'insert' ? idx : idx + 1;
      }
    } else if (c.op === 'insert') position = 0;
    const rule: NftRule = { handle: t.nextHandle++, statements, ...(comment !== undefined ? { comment } : {}), span: c.span };
    chain.rules.splice(position, 0, rule);
  }

  /**
   * `jump|goto { … }`: a chain of the table with a name of the kernel's making, created (and
   * given its handle) before the rule that binds it, its rules added to it in order. The kernel
   * binds no chain to a rule of a bound chain.
   */
  private boundChain(s: Extract<RawStatement, { t: 'verdict' }>, block: readonly RawBoundRule[], ctx: RuleContext): NftStatement {
    const t = ctx.table;
    if (this.inBinding) this.commitFail('UNSUPPORTED', 'Could not process rule: Operation not supported', s.span, s.verdict);
    const name = `__chain${this.nextBinding++}`;
    const chain: MChain = { name, handle: t.nextHandle++, rules: [], span: s.span, binding: true };
    t.chains.push(chain);
    const outer = this.inBinding;
    this.inBinding = true;
    try {
      for (const r of block) this.ruleCommand({ c: 'rule', op: 'add', family: t.family, table: t.name, chain: name, statements: r.statements, span: r.span, chainSpan: s.span });
    } finally {
      this.inBinding = outer;
    }
    return { kind: 'verdict', verdict: s.verdict, chain: name, span: s.span };
  }

  /** The anonymous chains bound to rules that go (deleted, replaced, flushed) go with them. */
  private unbind(t: MTable, rules: readonly NftRule[]): void {
    const names = new Set(rules.flatMap((r) => r.statements.flatMap((st) => (st.kind === 'verdict' && st.chain !== undefined ? [st.chain] : []))));
    const gone = t.chains.filter((c) => c.binding && names.has(c.name));
    if (gone.length === 0) return;
    t.chains = t.chains.filter((c) => !gone.includes(c));
  }

  private statement(s: RawStatement, ctx: RuleContext): NftStatement {
    switch (s.t) {
      case 'match': return this.match(s, ctx);
      case 'verdict':
        if (s.block) return this.boundChain(s, s.block, ctx);
        return { kind: 'verdict', verdict: s.verdict, ...(s.chain !== undefined ? { chain: s.chain } : {}), span: s.chainSpan ?? s.span };
      case 'vmap': {
        const key = this.selectorExpr(s.key, ctx);
        const kt = keyTypes(key);
        const mappings = this.mappings(s.mappings, kt, 'verdict', ctx, s.span);
        return { kind: 'vmap', key, mappings, span: s.span };
      }
      case 'counter': return { kind: 'counter', packets: s.packets, bytes: s.bytes, span: s.span };
      case 'log': {
        const { t: _t, ...rest } = s;
        void _t;
        if (rest.prefix !== undefined && rest.prefix.length > 127) fail('BAD_VALUE', 'log prefix is too long (127 characters at most)', s.span);
        if (rest.group !== undefined && (rest.level !== undefined || rest.flags !== undefined)) fail('BAD_VALUE', 'level and flags are not supported with group', s.span);
        if (rest.group === undefined && (rest.snaplen !== undefined || rest.queueThreshold !== undefined)) fail('BAD_VALUE', 'snaplen and queue-threshold need group', s.span);
        if (rest.level === 'audit' && (rest.prefix !== undefined || rest.group !== undefined || rest.flags !== undefined)) fail('BAD_VALUE', "log level audit doesn't support any further options", s.span);
        return { kind: 'log', ...rest };
      }
      case 'limit': {
        if (s.rate === 0) fail('BAD_VALUE', 'limit rate must be greater than 0', s.span);
        if (s.bytes) {
          // nft_limit_init: the bucket of (rate + burst) bytes in nanoseconds of the unit must fit 64 bits.
          const unitNs = BigInt({ second: 1, minute: 60, hour: 3600, day: 86400, week: 604800 }[s.unit]) * 1_000_000_000n;
          if ((BigInt(s.rate) + BigInt(s.burst ?? 0)) * unitNs > (1n << 64n) - 1n) this.commitFail('BAD_VALUE', 'Could not process rule: Value too large for defined data type', s.span);
        }
        return { kind: 'limit', rate: s.rate, unit: s.unit, over: s.over, burst: s.burst ?? (s.bytes ? 0 : 5), ...(s.bytes ? { bytes: 'bytes' } : {}), span: s.span };
      }
      case 'reject': return this.reject(s, ctx);
      case 'nat': return this.nat(s, ctx);
      case 'tproxy': return this.tproxy(s, ctx);
      case 'mangle': return this.mangle(s, ctx);
      case 'notrack': return { kind: 'notrack', span: s.span };
      case 'optstrip':
        // nft adds no protocol dependency (`udp dport 53 reset tcp option mptcp` loads); the
        // kernel strips only what a TCP header carries.
        return { kind: 'optstrip', option: s.option, span: s.span };
      case 'comment': return fail('UNEXPECTED_TOKEN', 'comment', s.span);
      case 'objref': return this.objref(s, ctx);
      case 'quota': return { kind: 'quota', over: s.over, bytes: s.bytes, used: s.used, span: s.span };
      case 'connlimit': return { kind: 'connlimit', count: s.count, over: s.over, span: s.span };
      case 'queue': return this.queue(s, ctx);
      case 'dup': {
        if (ctx.family !== 'ip' && ctx.family !== 'ip6' && ctx.family !== 'inet' && ctx.family !== 'netdev') fail('BAD_VALUE', 'dup is for ip, ip6, inet and netdev tables', s.span);
        const fam = ctx.l3 === 'ip6' ? 'ip6' : ctx.l3 === 'ip' ? 'ip' : undefined;
        if (!fam && s.addr && ctx.family !== 'netdev') fail('BAD_VALUE', 'dup in an inet table needs the network protocol (ip or ip6 match first)', s.span);
        const addr = s.addr ? this.stmtValue(s.addr, fam === 'ip6' ? 'ipv6_addr' : fam === 'ip' ? 'ipv4_addr' : 'iface_index', ctx) : undefined;
        const dev = s.dev ? this.stmtValue(s.dev, 'iface_index', ctx) : undefined;
        return { kind: 'dup', ...(addr ? { addr } : {}), ...(dev ? { dev } : {}), span: s.span };
      }
      case 'fwd': {
        if (ctx.family !== 'netdev') fail('BAD_VALUE', 'fwd is only supported in the netdev family', s.span);
        const dev = this.stmtValue(s.dev, 'iface_index', ctx);
        const addr = s.addr ? this.stmtValue(s.addr, s.family === 'ip6' ? 'ipv6_addr' : 'ipv4_addr', ctx) : undefined;
        return { kind: 'fwd', ...(s.family ? { family: s.family } : {}), ...(addr && addr.kind === 'value' ? { addr } : {}), dev, span: s.span };
      }
      case 'synproxy': return { kind: 'synproxy', ...(s.mss !== undefined ? { mss: s.mss } : {}), ...(s.wscale !== undefined ? { wscale: s.wscale } : {}), flags: s.flags, span: s.span };
      case 'dynset': return this.dynset(s, ctx);
      case 'meter': return this.meter(s, ctx);
      case 'flow': {
        if (!ctx.table.flowtables.some((f) => f.name === s.flowtable)) fail('UNKNOWN_CHAIN', `No such file or directory; flowtable '${s.flowtable}' does not exist`, s.span, s.flowtable);
        return { kind: 'flow', flowtable: s.flowtable, span: s.span };
      }
    }
  }

  /** A statement's operand: a constant or a map lookup of a type. */
  private stmtValue(raw: RawExpr, type: NftType, ctx: RuleContext): NftValue | NftMapLookup {
    if (raw.t === 'map') {
      const key = this.selectorExpr(raw.key, ctx);
      const mappings = this.mappings(raw.mappings, keyTypes(key), type, ctx, raw.span);
      return { kind: 'map', key, mappings, dataType: type, dataBits: typeBits(type) };
    }
    const v = this.constant(raw, type, typeBits(type), false);
    if (v.kind !== 'value') fail('BAD_VALUE', 'a single value expected', raw.span);
    return v;
  }

  private objref(s: Extract<RawStatement, { t: 'objref' }>, ctx: RuleContext): NftStatement {
    const n = s.name;
    if (n.t === 'map') {
      const key = this.selectorExpr(n.key, ctx);
      const dataType: NftType = n.mappings.t === 'setref' ? (s.objType as NftType) : 'string';
      const mappings = this.mappings(n.mappings, keyTypes(key), dataType, ctx, n.span);
      return { kind: 'objref', objType: s.objType, map: { kind: 'map', key, mappings, dataType, dataBits: 128 }, span: s.span };
    }
    if (n.t !== 'sym') fail('BAD_VALUE', `${s.objType}: an object name expected`, n.span);
    if (s.objType === 'ct helper' || s.objType === 'ct timeout' || s.objType === 'ct expectation') {
      if (ctx.family !== 'ip' && ctx.family !== 'ip6' && ctx.family !== 'inet') fail('BAD_VALUE', `${s.objType} set: only in ip, ip6 and inet tables`, s.span);
    }
    const obj = ctx.table.objects.find((o) => o.name === n.text && o.type === s.objType);
    if (!obj) this.commitFail('UNKNOWN_CHAIN', `Could not process rule: No such file or directory (no ${s.objType} "${n.text}")`, s.span, n.text);
    return { kind: 'objref', objType: s.objType, name: n.text, span: s.span };
  }

  private queue(s: Extract<RawStatement, { t: 'queue' }>, ctx: RuleContext): NftStatement {
    let num: NftValue | NftRange | NftSelector | NftMapLookup | undefined;
    if (s.num) {
      const r = s.num;
      if (r.t === 'sel') num = this.selectorExpr(r, ctx);
      else if (r.t === 'map') {
        const key = this.selectorExpr(r.key, ctx);
        num = { kind: 'map', key, mappings: this.mappings(r.mappings, keyTypes(key), 'integer', ctx, r.span), dataType: 'integer', dataBits: 16 };
      } else {
        const c = this.constant(r, 'integer', 32, true);
        if (c.kind === 'prefix') fail('BAD_VALUE', 'queue numbers are a number or a range', r.span);
        num = c;
      }
    }
    if (num && (num.kind === 'value' || num.kind === 'range')) {
      const hi = num.kind === 'value' ? num.value : num.high.value;
      if (hi > 65535n) fail('BAD_VALUE', 'queue expression max value exceeds 65535', s.num!.span);
    }
    if (num && (num.kind === 'numgen' || num.kind === 'hash') && num.offset + num.modulus - 1 > 65535) fail('BAD_VALUE', 'queue expression max value exceeds 65535', s.num!.span);
    if (s.flags.includes('fanout') && num?.kind !== 'range') fail('BAD_VALUE', 'fanout requires a range to be specified', s.span);
    return { kind: 'queue', ...(num ? { num } : {}), flags: s.flags, span: s.span };
  }

  /** `meter NAME [size N] { KEY [timeout T] STMT }`: nft makes a dynamic set of that name, unlisted, and updates it. */
  private meter(s: Extract<RawStatement, { t: 'meter' }>, ctx: RuleContext): NftStatement {
    const key = this.selectorExpr(s.key, ctx);
    const types = keyTypes(key);
    const size = s.size ?? 65535;
    let set = ctx.table.sets.find((x) => x.name === s.name);
    if (set === undefined) {
      set = {
        name: s.name, handle: ctx.table.nextHandle++, key: types.map((k) => k.type), keyBits: types.map((k) => k.bits),
        flags: s.timeout !== undefined ? ['dynamic', 'timeout'] : ['dynamic'], elements: [], size, fresh: true, meter: true, span: s.span,
      };
      ctx.table.sets.push(set);
    } else {
      if (!set.meter) fail('BAD_VALUE', `a set named ${s.name} already exists: a meter needs a name of its own`, s.span, s.name);
      checkKeyCompat(set.key, types.map((k) => k.type), s.span);
    }
    const stateful = [this.statement(s.stmt, ctx)];
    return { kind: 'dynset', op: 'update', set: s.name, key, ...(s.timeout !== undefined ? { timeout: s.timeout } : {}), stateful, meter: { size }, span: s.span };
  }

  private dynset(s: Extract<RawStatement, { t: 'dynset' }>, ctx: RuleContext): NftStatement {
    const set = ctx.table.sets.find((x) => x.name === s.set);
    if (!set) fail('UNKNOWN_CHAIN', `No such file or directory; did you mean set '${s.set}'?`, s.setSpan, s.set);
    // A constant in the key's concatenation (`ip saddr . 22`) takes the set's type at its place.
    const constantAt = (item: RawExpr, i: number): NftSelector => {
      if (i >= set.key.length) fail('BAD_VALUE', "Can't parse symbolic invalid expressions", item.span);
      const v = this.constant(item, set.key[i]!, set.keyBits[i]!, false);
      if (v.kind !== 'value') fail('BAD_VALUE', 'a constant in a set key is a single value', item.span);
      return { kind: 'const', value: v };
    };
    const key: NftSelector = s.key.t === 'concat' && s.key.items.some((x) => !SELECTOR_RAW.has(x.t))
      ? { kind: 'concat', items: s.key.items.map((x, i) => (SELECTOR_RAW.has(x.t) ? this.selectorExpr(x, ctx) : constantAt(x, i))) }
      : this.selectorExpr(s.key, ctx);
    checkKeyCompat(set.key, keyTypes(key).map((k) => k.type), s.span);
    let data: NftSelector | NftValue | undefined;
    if (s.data) {
      if (set.data === undefined) fail('BAD_VALUE', 'set has no data: not a map', s.span);
      data = s.data.t === 'sel' || s.data.t === 'concat' || s.data.t === 'binop' ? this.selectorExpr(s.data, ctx) : this.constant(s.data, set.data, typeBits(set.data), false) as NftValue;
    }
    if (s.timeout !== undefined && !set.flags.includes('timeout')) fail('BAD_VALUE', 'set does not support timeouts', s.span);
    const stateful = s.stateful.map((x) => this.statement(x, ctx));
    // nft_dynset: the kernel gives a set filled from the packet path without a size 65535 slots;
    // nft marks a set it declares in the same file as dynamic (one declared by an earlier file
    // keeps its flags: checked against nft 1.0.6 on this kernel).
    if (set.size === undefined) set.size = 65535;
    // A map updated from the packet path is not marked so (checked against nft 1.0.6 here too).
    if (set.fresh === true && set.data === undefined && !set.flags.includes('dynamic')) set.flags.push('dynamic');
    return { kind: 'dynset', op: s.op, set: s.set, key, ...(data ? { data } : {}), ...(s.timeout !== undefined ? { timeout: s.timeout } : {}), stateful, span: s.span };
  }

  private reject(s: Extract<RawStatement, { t: 'reject' }>, ctx: RuleContext): NftStatement {
    if (ctx.family === 'arp') fail('BAD_VALUE', 'reject is not supported in the arp family', s.span);
    if ((ctx.family === 'bridge' || ctx.family === 'netdev') && ctx.l3 === 'arp') fail('BAD_VALUE', 'cannot reject this network family', s.span);
    if (!s.with) {
      // nft picks the ICMP flavour from the family or the rule's network protocol.
      const l3 = ctx.family === 'ip' || ctx.family === 'ip6' ? ctx.family : ctx.l3;
      const type = l3 === 'ip' ? 'icmp' : l3 === 'ip6' ? 'icmpv6' : 'icmpx';
      return { kind: 'reject', with: { type, code: 'port-unreachable' }, span: s.span };
    }
    if (s.with.type === 'tcp-reset') {
      if (ctx.l4 !== undefined && ctx.l4 !== 6 && ctx.l4 !== ANY_L4) fail('BAD_VALUE', 'conflicting protocols specified: tcp vs. ' + (L4_NAMES[ctx.l4] ?? ctx.l4), s.span);
      return { kind: 'reject', with: { type: 'tcp-reset' }, span: s.span };
    }
    const type = s.with.type;
    if (type === 'icmp' && ctx.l3 === 'ip6') fail('BAD_VALUE', 'conflicting protocols specified: ip6 vs. ip', s.span);
    if (type === 'icmpv6' && ctx.l3 === 'ip') fail('BAD_VALUE', 'conflicting protocols specified: ip vs. ip6', s.span);
    if (type === 'icmpx' && (ctx.family === 'ip' || ctx.family === 'ip6')) fail('BAD_VALUE', 'icmpx reject codes are for inet, bridge and netdev tables', s.span);
    const raw = s.with.code!;
    const names = REJECT_CODES[type]!;
    const text = raw.t === 'sym' ? raw.text : '';
    const byNumber = /^[0-9]+$/.test(text) ? names.find(([, n]) => n === Number(text)) : undefined;
    const hit = byNumber ?? names.find(([n]) => n === text);
    if (!hit) fail('BAD_VALUE', `Could not parse ${type === 'icmpx' ? 'ICMPX' : type === 'icmp' ? 'ICMP' : 'ICMPv6'} code`, raw.span, text);
    if (ctx.family !== 'ip' && ctx.family !== 'ip6') {
      if (type === 'icmp') ctx.l3 = 'ip';
      if (type === 'icmpv6') ctx.l3 = 'ip6';
    }
    return { kind: 'reject', with: { type, code: hit[0] }, span: s.span };
  }

  private nat(s: Extract<RawStatement, { t: 'nat' }>, ctx: RuleContext): NftStatement {
    if (ctx.family !== 'ip' && ctx.family !== 'ip6' && ctx.family !== 'inet') fail('BAD_VALUE', `${s.type} is only supported in ip, ip6 and inet tables`, s.span);
    let family = s.family;
    if (family && ctx.family !== 'inet' && family !== ctx.family) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.family} vs. ${family}`, s.span);
    if (s.port && ctx.l4 === undefined) {
      fail('BAD_VALUE', 'transport protocol mapping is only valid after transport protocol match', s.port.span);
    }
    let addr: NftValue | NftRange | NftPrefix | NftMapLookup | undefined;
    let port: NftValue | NftRange | NftMapLookup | undefined;
    const flags = [...s.flags];
    if (s.addr) {
      if (ctx.family === 'inet' && !family) {
        if (ctx.l3 === 'ip' || ctx.l3 === 'ip6') family = ctx.l3;
        else if (s.addr.t !== 'map') fail('BAD_VALUE', 'ip or ip6 must be specified with address for inet tables.', s.span);
      }
      const fam = ctx.family === 'inet' ? family : ctx.family;
      if (!fam) fail('BAD_VALUE', `specify \`${s.type} ip\` or '${s.type} ip6' in inet table to disambiguate`, s.span);
      if (ctx.l3 && fam !== ctx.l3) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.l3} vs. ${fam}`, s.span);
      const type: NftType = fam === 'ip6' ? 'ipv6_addr' : 'ipv4_addr';
      const bits = fam === 'ip6' ? 128 : 32;
      if (s.addr.t === 'map') {
        const key = this.selectorExpr(s.addr.key, ctx);
        // `dnat ip to … map { KEY : ADDR . PORT }`: a map to address and port is an addr . port NAT.
        const m = s.addr.mappings;
        const concatData = s.concat || (m.t === 'set' && m.elements.some((e) => e.data?.t === 'concat'))
          || (m.t === 'setref' && (ctx.table.sets.find((x) => x.name === m.name)?.dataConcat?.length ?? 0) > 0 && !s.interval && !s.prefix);
        if (concatData) {
          if (ctx.l4 === undefined) fail('BAD_VALUE', 'transport protocol mapping is only valid after transport protocol match', s.addr.span);
          const mappings = this.concatMappings(s.addr.mappings, keyTypes(key), [type, 'inet_service'], ctx, s.addr.span, true);
          addr = { kind: 'map', key, mappings, dataType: type, dataBits: bits };
        } else {
          const mappings = this.mappings(s.addr.mappings, keyTypes(key), type, ctx, s.addr.span, true);
          addr = { kind: 'map', key, mappings, dataType: type, dataBits: bits };
        }
        if (s.prefix && !flags.includes('netmap')) flags.push('netmap');
      } else {
        if (s.concat) fail('BAD_VALUE', 'addr . port needs a map', s.addr.span);
        addr = this.constant(s.addr, type, bits, true);
        if (addr.kind === 'prefix' && addr.length === bits) addr = addr.value;
        if (s.prefix && addr.kind !== 'prefix') fail('BAD_VALUE', 'prefix NAT needs an address prefix', s.addr.span);
      }
    } else if (s.type === 'snat' || s.type === 'dnat') {
      if (!s.port) fail('UNEXPECTED_TOKEN', `syntax error, ${s.type} needs an address`, s.span);
    }
    if (s.port) {
      if (s.port.t === 'map') {
        const key = this.selectorExpr(s.port.key, ctx);
        port = { kind: 'map', key, mappings: this.mappings(s.port.mappings, keyTypes(key), 'inet_service', ctx, s.port.span), dataType: 'inet_service', dataBits: 16 };
      } else {
        const p = this.constant(s.port, 'inet_service', 16, true);
        if (p.kind === 'prefix') fail('BAD_VALUE', 'port ranges are written low-high', s.port.span);
        port = p.kind === 'range' && p.low.value === p.high.value ? p.low : p;
      }
    }
    const inetFamily = ctx.family === 'inet' && (s.type === 'snat' || s.type === 'dnat') ? family : undefined;
    const concat = s.concat || (addr?.kind === 'map' && (addr.mappings.kind === 'set' ? addr.mappings.elements.some((e) => e.data?.kind === 'concat-value')
      : (ctx.table.sets.find((x) => x.name === (addr.mappings as NftSetRef).name)?.dataConcat?.length ?? 0) > 0));
    return {
      kind: 'nat', type: s.type, ...(inetFamily ? { family: inetFamily } : {}), ...(addr ? { addr } : {}), ...(port ? { port } : {}), flags, span: s.span,
      ...(concat ? { concat: true } : {}), ...(s.interval ? { interval: true } : {}), ...(s.prefix ? { prefix: true } : {}),
      ...(addr?.kind === 'map' && mapHasIntervalData(addr, ctx.table) ? { intervalData: true } : {}),
    };
  }

  private tproxy(s: Extract<RawStatement, { t: 'tproxy' }>, ctx: RuleContext): NftStatement {
    if (ctx.family !== 'ip' && ctx.family !== 'ip6' && ctx.family !== 'inet') fail('BAD_VALUE', 'tproxy is only supported in ip, ip6 and inet tables', s.span);
    if (ctx.l4 === undefined) fail('BAD_VALUE', 'transparent proxy support requires transport protocol match', s.span);
    let family = s.family;
    if (ctx.family !== 'inet') {
      if (family && family !== ctx.family) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.family} vs. ${family}`, s.span);
      family = undefined;
    } else {
      if (!family) {
        if (s.addr) fail('BAD_VALUE', 'specify `tproxy ip` or `tproxy ip6` in inet table', s.span);
      } else if (ctx.l3 && ctx.l3 !== family) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.l3} vs. ${family}`, s.span);
    }
    const fam = family ?? (ctx.family === 'inet' ? undefined : ctx.family);
    const addr = s.addr ? (this.constant(s.addr, fam === 'ip6' ? 'ipv6_addr' : 'ipv4_addr', fam === 'ip6' ? 128 : 32, false) as NftValue) : undefined;
    if (addr && addr.kind !== 'value') fail('BAD_VALUE', 'tproxy takes one address', s.span);
    const port = s.port ? (this.constant(s.port, 'inet_service', 16, false) as NftValue) : undefined;
    return { kind: 'tproxy', ...(family ? { family } : {}), ...(addr ? { addr } : {}), ...(port ? { port } : {}), span: s.span };
  }

  private mangle(s: Extract<RawStatement, { t: 'mangle' }>, ctx: RuleContext): NftStatement {
    const target = s.target;
    if (target.t !== 'sel') fail('BAD_VALUE', 'only header fields, meta and ct keys can be set', s.span);
    const sel = target.sel;
    switch (sel.kind) {
      case 'meta':
        if (!SETTABLE_META.has(sel.key)) fail('BAD_VALUE', `meta ${sel.key} cannot be set`, target.span);
        break;
      case 'ct':
        if (!['mark', 'zone', 'event', 'label', 'secmark'].includes(sel.key)) fail('BAD_VALUE', `ct ${sel.key} cannot be set`, target.span);
        if (sel.direction && sel.key !== 'zone') fail('BAD_VALUE', `ct ${sel.key} cannot be set with a direction`, target.span);
        break;
      case 'ipopt':
        // nft_exthdr writes TCP options only: the kernel refuses the rule.
        this.context(sel, target.span, ctx);
        this.commitFail('UNSUPPORTED', 'Could not process rule: Operation not supported', target.span);
        break;
      case 'payload': case 'exthdr': case 'tcpopt':
        this.context(sel, target.span, ctx);
        if (sel.kind === 'tcpopt' && (sel.field === undefined || sel.field === 'kind')) fail('BAD_VALUE', 'tcp option kind cannot be set', target.span);
        break;
      case 'rawpayload':
        break;
      default:
        fail('BAD_VALUE', `${sel.kind} expressions cannot be set`, target.span);
    }
    const st = selectorType(sel);
    const v = s.value;
    if (v.t === 'sel' || v.t === 'concat') {
      const src = this.selectorExpr(v, ctx);
      return { kind: 'mangle', target: sel, value: src, span: s.span };
    }
    if (v.t === 'binop' && containsSelector(v)) {
      const b = this.selectorExpr(v, ctx);
      return { kind: 'mangle', target: sel, value: b, span: s.span };
    }
    if (v.t === 'map') {
      const key = this.selectorExpr(v.key, ctx);
      const mappings = this.mappings(v.mappings, keyTypes(key), st.type, ctx, v.span);
      return { kind: 'mangle', target: sel, value: { kind: 'map', key, mappings, dataType: st.type, dataBits: st.bits }, span: s.span };
    }
    const c = this.constant(v, st.type, st.bits, false);
    if (c.kind !== 'value') fail('BAD_VALUE', 'a single value expected', v.span);
    return { kind: 'mangle', target: sel, value: c, span: s.span };
  }

  private mappings(raw: RawExpr, key: readonly { type: NftType; bits: number }[], data: NftType, ctx: RuleContext, span: Span, interval = false): NftAnonSet | NftSetRef {
    if (raw.t === 'setref') {
      const set = ctx.table.sets.find((s) => s.name === raw.name);
      if (!set) fail('UNKNOWN_CHAIN', `No such file or directory; did you mean map '${raw.name}'?`, raw.span, raw.name);
      if (set.data === undefined) fail('BAD_VALUE', `Expression is not a map`, raw.span, raw.name);
      if (set.data !== data && !(isIntegerLike(set.data) && isIntegerLike(data))) fail('BAD_VALUE', `datatype mismatch, map expects ${set.data}, mapping expression has type ${data}`, raw.span, raw.name);
      checkKeyCompat(set.key, key.map((k) => k.type), raw.span);
      return { kind: 'setref', name: raw.name };
    }
    if (raw.t !== 'set') fail('BAD_VALUE', 'map expects a set of mappings', raw.span);
    const elements = raw.elements.map((e) => this.element(e, key.map((k) => k.type), key.map((k) => k.bits), data, ctx, undefined, interval));
    if (elements.length === 0) fail('BAD_VALUE', 'empty map', span);
    // An anonymous map's intervals cannot overlap: the data of the overlap would be ambiguous.
    elements.forEach((e, i) => {
      if (e.key.length !== 1 || e.key[0]!.kind === 'value') return;
      const [lo, hi] = bounds(e.key[0]!);
      for (let j = 0; j < i; j++) {
        const o = elements[j]!;
        if (o.key.length !== 1) continue;
        const [ol, oh] = bounds(o.key[0]!);
        if (lo <= oh && ol <= hi) fail('BAD_VALUE', 'conflicting intervals specified', raw.elements[i]!.span);
      }
    });
    return { kind: 'set', elements, key: key.map((k) => k.type), interval: elements.some((e) => e.key.some((k) => k.kind !== 'value')) };
  }

  /** Mappings whose data is a concatenation (`… : 10.0.0.3 . 8080`). */
  private concatMappings(raw: RawExpr, key: readonly { type: NftType; bits: number }[], data: readonly NftType[], ctx: RuleContext, span: Span, interval = false): NftAnonSet | NftSetRef {
    if (raw.t === 'setref') {
      const set = ctx.table.sets.find((s) => s.name === raw.name);
      if (!set) fail('UNKNOWN_CHAIN', `No such file or directory; did you mean map '${raw.name}'?`, raw.span, raw.name);
      if (set.data === undefined || set.data !== data[0] || (set.dataConcat ?? []).join() !== data.slice(1).join()) fail('BAD_VALUE', 'datatype mismatch, map data is not address . port', raw.span, raw.name);
      checkKeyCompat(set.key, key.map((k) => k.type), raw.span);
      return { kind: 'setref', name: raw.name };
    }
    if (raw.t !== 'set') fail('BAD_VALUE', 'map expects a set of mappings', raw.span);
    const elements = raw.elements.map((e) => this.element(e, key.map((k) => k.type), key.map((k) => k.bits), data[0]!, ctx, data.slice(1), interval));
    if (elements.length === 0) fail('BAD_VALUE', 'empty map', span);
    return { kind: 'set', elements, key: key.map((k) => k.type), interval: elements.some((e) => e.key.some((k) => k.kind !== 'value')) };
  }

  /** A left-hand expression: a selector with bitwise operations folded, or a concatenation. */
  private selectorExpr(raw: RawExpr, ctx: RuleContext): NftSelector {
    switch (raw.t) {
      case 'sel':
        if (raw.sel.kind === 'rt' && raw.sel.key === 'nexthop') {
          // The next hop's address family: written, or the table's, or the rule's network protocol.
          const fam = raw.sel.family ?? (ctx.family === 'ip' || ctx.family === 'ip6' ? ctx.family : ctx.l3 === 'ip' || ctx.l3 === 'ip6' ? ctx.l3 : undefined);
          if (!fam) fail('BAD_VALUE', 'cannot determine ip protocol version, use "ip nexthop" or "ip6 nexthop" instead', raw.span);
          if ((ctx.family === 'ip' || ctx.family === 'ip6') && fam !== ctx.family) fail('BAD_VALUE', `${fam} nexthop will not match`, raw.span);
          if (!raw.sel.family) return this.selectorExpr({ ...raw, sel: { ...raw.sel, family: fam } }, ctx);
        }
        this.context(raw.sel, raw.span, ctx);
        if (raw.sel.kind === 'hash' && raw.sel.expr) this.contextOf(raw.sel.expr, raw.span, ctx);
        return raw.sel;
      case 'concat':
        return { kind: 'concat', items: raw.items.map((i) => this.selectorExpr(i, ctx)) };
      case 'binop': {
        const left = this.selectorExpr(raw.left, ctx);
        const st = selectorType(left);
        if (left.kind === 'concat') fail('BAD_VALUE', 'Binary operation (&, |, ^) is not supported on concatenations', raw.span);
        if (st.type === 'ifname' || st.type === 'string') fail('BAD_VALUE', 'Binary operation is not supported for string types', raw.span);
        if (raw.op === '<<' || raw.op === '>>') {
          const by = this.constant(raw.right, 'integer', 32, false);
          if (by.kind !== 'value') fail('BAD_VALUE', 'a shift takes a number', raw.right.span);
          return { kind: 'shift', operand: left, op: raw.op, by: Number(by.value), bits: st.bits, type: st.type };
        }
        const ones = allOnes(st.bits);
        const operand = left.kind === 'bitwise' ? left.operand : left;
        let mask = left.kind === 'bitwise' ? left.mask : ones;
        let xor = left.kind === 'bitwise' ? left.xor : 0n;
        const c = this.flags(raw.right, st.type, st.bits);
        switch (raw.op) {
          case '&': mask &= c.value; xor &= c.value; break;
          case '|': mask &= ones ^ c.value; xor |= c.value; break;
          case '^': xor ^= c.value; break;
        }
        return { kind: 'bitwise', operand, mask, xor, bits: st.bits, type: st.type };
      }
      case 'var':
        return fail('UNEXPECTED_TOKEN', 'syntax error, expecting a selector', raw.span);
      default:
        return fail('BAD_VALUE', 'Expression is a constant; a selector is expected on the left', raw.span);
    }
  }

  private contextOf(sel: NftSelector, span: Span, ctx: RuleContext): void {
    if (sel.kind === 'concat') for (const i of sel.items) this.contextOf(i, span, ctx);
    else this.context(sel, span, ctx);
  }

  /** Protocol context: what a selector implies and where it conflicts. */
  private context(sel: NftSelector, span: Span, ctx: RuleContext): void {
    const conflict = (a: string, b: string): never => fail('BAD_VALUE', `conflicting protocols specified: ${a} vs. ${b}`, span);
    // A header that needs a transport protocol conflicts with the one in force, and with any other
    // the rule established before (nft 1.0.6 keeps them all).
    const needL4 = (n: number, name: string): void => {
      if (ctx.l4 !== undefined && ctx.l4 !== n && ctx.l4 !== ANY_L4) conflict(L4_NAMES[ctx.l4] ?? String(ctx.l4), name);
      const earlier = ctx.l4Seen?.find((x) => x !== n);
      if (earlier !== undefined) conflict(L4_NAMES[earlier] ?? String(earlier), name);
    };
    const needL3 = (l3: 'ip' | 'ip6' | 'arp'): void => {
      if (ctx.l3 && ctx.l3 !== l3) conflict(ctx.l3, l3);
      ctx.l3 = l3;
    };
    switch (sel.kind) {
      case 'payload': {
        const p = sel.protocol;
        if (p === 'ether' || p === 'vlan') {
          if (ctx.family === 'arp') conflict('arp', p);
          // A vlan header follows only an ether type of 802.1Q or 802.1ad.
          if (p === 'vlan' && ctx.etherType !== undefined && ctx.etherType !== 0x8100n && ctx.etherType !== 0x88a8n) conflict('ether', 'vlan');
          // So does a network protocol the rule already fixed above the Ethernet header.
          if (p === 'vlan' && ctx.etherType === undefined && !ctx.vlan && ctx.l3 !== undefined && (ctx.family === 'bridge' || ctx.family === 'netdev')) conflict('ether', 'vlan');
          if (p === 'vlan') ctx.vlan = true;
          return;
        }
        if (p === 'arp') {
          if (ctx.family !== 'arp' && ctx.family !== 'bridge' && ctx.family !== 'netdev') conflict(ctx.family, 'arp');
          needL3('arp');
          return;
        }
        if (p === 'ip' || p === 'ip6') {
          needL3(p);
          return;
        }
        if (ctx.l3 === 'arp') conflict('arp', p);
        if (p === 'th') return;
        const n = L4_PROTOCOLS[p]!;
        // nft takes icmp in an ip6 rule and icmpv6 after `meta nfproto ipv4` (it never matches).
        needL4(n, p);
        const other = ctx.l4 === ANY_L4 ? ctx.l4Set?.find((x) => x !== n) : undefined;
        if (other !== undefined) conflict(L4_NAMES[other] ?? String(other), p);
        establishL4(ctx, n);
        const dep = ICMP_DEPS[p]?.[sel.field];
        if (dep) {
          // payload_gen_icmp_dependency: the type these fields need, unless a match fixed it.
          if (ctx.icmpType === undefined) {
            const t: NftType = p === 'icmp' ? 'icmp_type' : 'icmpv6_type';
            const v = (x: number): NftValue => ({ kind: 'value', type: t, bits: 8, value: BigInt(x) });
            const right: NftRight = dep.values.length === 1 ? v(dep.values[0]!) : { kind: 'set', elements: dep.values.map((x) => ({ key: [v(x)] })), key: [t], interval: false };
            (ctx.pending ??= []).push({ kind: 'match', left: { kind: 'payload', protocol: p, field: 'type' }, op: 'implicit', right });
            ctx.icmpType = dep.type;
          } else if (ctx.icmpType !== dep.type) {
            fail('BAD_VALUE', `incompatible icmp match: rule has ${ctx.icmpType}, need ${dep.type}`, span);
          }
        }
        if (ctx.family !== 'ip' && ctx.family !== 'ip6' && p === 'icmp') ctx.l3 = 'ip';
        if (ctx.family !== 'ip' && ctx.family !== 'ip6' && p === 'icmpv6') ctx.l3 = 'ip6';
        return;
      }
      case 'exthdr':
        if (ctx.l3 === 'ip' || ctx.l3 === 'arp') conflict(ctx.l3, 'ip6');
        return;
      case 'ipopt':
        // exthdr_evaluate_ipopt: IPv4 options need IPv4; nft adds no dependency to the listing.
        if (ctx.l3 !== undefined && ctx.l3 !== 'ip') fail('BAD_VALUE', `cannot use exthdr with ${ctx.l3}`, span);
        ctx.l3 = 'ip';
        return;
      case 'sctpchunk':
        if (ctx.l3 === 'arp') conflict('arp', 'sctp');
        needL4(132, 'sctp');
        establishL4(ctx, 132);
        return;
      case 'tcpopt':
        if (ctx.l3 === 'arp') conflict('arp', 'tcp');
        needL4(6, 'tcp');
        establishL4(ctx, 6);
        return;
      case 'ct':
        // A ct address takes its family from the table or the rule's network protocol only as
        // the whole left side of a match; in a concatenation or a map key nft wants it written.
        if ((sel.key === 'saddr' || sel.key === 'daddr') && !sel.family) fail('BAD_VALUE', 'specify either ip or ip6 for address matching', span);
        // A ct port has the type of the transport protocol the rule fixed before it; without
        // one nft 1.0.6 types it `invalid` and refuses what uses it.
        if ((sel.key === 'proto-src' || sel.key === 'proto-dst') && ctx.l4 === undefined && !ctx.ctProtocol) {
          fail('BAD_VALUE', `Can't parse symbolic invalid expressions: ct ${sel.key} has no type where the rule fixes no transport protocol before it`, span);
        }
        if (sel.family && ctx.family === 'inet' && (ctx.l3 === 'ip' || ctx.l3 === 'ip6') && ctx.l3 !== sel.family) conflict(ctx.l3, sel.family);
        if (ctx.family === 'arp' || ctx.family === 'netdev') {
          // No conntrack there: nft refuses the expression at evaluation.
          if (ctx.family === 'arp') fail('BAD_VALUE', 'ct expression is not supported in the arp family', span);
        }
        return;
      case 'osf':
        // nft_osf reads IPv4 headers: the kernel takes it in ip and inet tables only.
        if (ctx.family !== 'ip' && ctx.family !== 'inet') this.commitFail('BAD_VALUE', `Could not process rule: Operation not supported (osf is only for ip and inet tables)`, span, 'osf');
        return;
      case 'meta':
        // The bridge port keys exist only in bridge tables: the kernel refuses them elsewhere.
        if (['ibrname', 'obrname', 'ibriport', 'obriport', 'ibrvproto', 'ibrpvid'].includes(sel.key) && ctx.family !== 'bridge' && ctx.declaration !== true) {
          this.commitFail('BAD_VALUE', `Could not process rule: Operation not supported (meta ${sel.key} is only for bridge tables)`, span, sel.key);
        }
        if (sel.key === 'nfproto' && ctx.family !== 'inet') fail('BAD_VALUE', 'meta nfproto is only useful in the inet family', span);
        return;
      case 'fib':
        if (ctx.family === 'arp' || ctx.family === 'netdev') fail('BAD_VALUE', `fib expression is not supported in the ${ctx.family} family`, span);
        return;
      case 'bitwise': case 'shift':
        this.context(sel.operand, span, ctx);
        return;
      case 'concat':
        for (const i of sel.items) this.context(i, span, ctx);
        return;
      default:
        return;
    }
  }

  private match(s: Extract<RawStatement, { t: 'match' }>, ctx: RuleContext): NftStatement {
    let rawLeft = s.left;
    if (rawLeft.t === 'sel' && rawLeft.sel.kind === 'ct' && (rawLeft.sel.key === 'saddr' || rawLeft.sel.key === 'daddr') && !rawLeft.sel.family) {
      const fam = ctx.family === 'ip' || ctx.family === 'ip6' ? ctx.family : ctx.l3 === 'ip' || ctx.l3 === 'ip6' ? ctx.l3 : undefined;
      if (fam) rawLeft = { ...rawLeft, sel: { ...rawLeft.sel, family: fam } };
    }
    let left = this.selectorExpr(rawLeft, ctx);
    if (left.kind === 'ct' && (left.key === 'saddr' || left.key === 'daddr') && !left.family) left = { ...left, family: ctx.family === 'ip6' ? 'ip6' : 'ip' };
    if (left.kind === 'ct' && left.family && ctx.family !== 'inet' && ctx.family !== 'bridge' && ctx.family !== 'netdev' && left.family !== ctx.family) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.family} vs. ${left.family}`, s.left.span);
    const kts = keyTypes(left);
    let right: NftRight;
    const r = s.right;
    if (r.t === 'set') {
      if (r.elements.length === 0) fail('BAD_VALUE', 'empty set', r.span);
      const elements = r.elements.map((e) => this.element(e, kts.map((k) => k.type), kts.map((k) => k.bits), undefined, ctx));
      right = { kind: 'set', elements, key: kts.map((k) => k.type), interval: elements.some((e) => e.key.some((k) => k.kind !== 'value')) };
    } else if (r.t === 'setref') {
      const set = ctx.table.sets.find((x) => x.name === r.name);
      if (!set) fail('UNKNOWN_CHAIN', `No such file or directory; did you mean set '${r.name}'?`, r.span, r.name);
      if (set.data !== undefined) fail('BAD_VALUE', `Expression is a map, not a set`, r.span, r.name);
      checkKeyCompat(set.key, kts.map((k) => k.type), r.span);
      right = { kind: 'setref', name: r.name };
    } else if (r.t === 'concat') {
      if (left.kind !== 'concat' || left.items.length !== r.items.length) fail('BAD_VALUE', 'datatype mismatch: concatenation', r.span);
      right = { kind: 'concat-value', items: r.items.map((it, i) => this.constant(it, kts[i]!.type, kts[i]!.bits, true)) };
    } else if ((left.kind === 'fib' && left.result !== 'type') || (left.kind === 'exthdr' && left.field === undefined) || (left.kind === 'ipopt' && left.field === undefined) || (left.kind === 'tcpopt' && left.field === undefined && left.raw === undefined) || (left.kind === 'sctpchunk' && left.field === undefined)
      || (left.kind === 'rt' && left.key === 'ipsec') || (left.kind === 'meta' && left.key === 'ipsec')) {
      if (r.t !== 'sym' || (r.text !== 'exists' && r.text !== 'missing' && (left.kind === 'fib' || (r.text !== 'true' && r.text !== 'false' && !/^[01]$/.test(r.text))))) {
        if (left.kind === 'fib') right = this.constant(r, selectorType(left).type, selectorType(left).bits, true);
        else fail('BAD_VALUE', 'exists or missing expected', r.span, r.t === 'sym' ? r.text : undefined);
      } else right = { kind: 'value', type: 'boolean', bits: 1, value: r.text === 'exists' || r.text === 'true' || r.text === '1' ? 1n : 0n };
    } else {
      if (left.kind === 'concat') fail('BAD_VALUE', 'datatype mismatch, expected concatenation', r.span);
      const st = selectorType(left);
      right = this.constant(r, st.type, st.bits, true);
      if (right.kind === 'prefix' && right.length === st.bits && right.value.type !== 'ifname') right = right.value;
    }
    if (right.kind === 'set' && (s.op === 'implicit' || s.op === '==') && ctx.l4 === undefined
      && ((left.kind === 'meta' && left.key === 'l4proto') || (left.kind === 'payload' && ((left.protocol === 'ip' && left.field === 'protocol') || (left.protocol === 'ip6' && left.field === 'nexthdr'))))) {
      ctx.l4 = ANY_L4;
      ctx.l4Set = right.elements.flatMap((e) => (e.key[0]?.kind === 'value' ? [Number(e.key[0].value)] : []));
      (ctx.l4Seen ??= []).push(...ctx.l4Set);
    }
    if (left.kind === 'payload' && left.field === 'type' && (left.protocol === 'icmp' || left.protocol === 'icmpv6') && right.kind === 'set' && (s.op === 'implicit' || s.op === '==')) {
      // A set of echo types fixes the type as far as the echo fields are concerned.
      const echo = left.protocol === 'icmp' ? [0n, 8n] : [128n, 129n];
      if (right.elements.every((e) => e.key[0]?.kind === 'value' && echo.includes(e.key[0].value))) ctx.icmpType = left.protocol === 'icmp' ? 8 : 128;
    }
    let op: RawOp = s.op;
    if (left.kind === 'bitwise' && left.mask === allOnes(left.bits) && right.kind === 'value' && (op === '==' || op === '!=' || op === 'implicit')) {
      // nft folds a pure xor into the constant: `mark ^ 3 == 1` is `mark 2`.
      right = { ...right, value: right.value ^ left.xor };
      left = left.operand;
    }
    if (right.kind === 'range' && (op === '<' || op === '>' || op === '<=' || op === '>=')) fail('BAD_VALUE', 'Relational expression size mismatch', r.span);
    if ((right.kind === 'set' || right.kind === 'setref') && op !== 'implicit' && op !== '==' && op !== '!=') fail('BAD_VALUE', `Relational operator ${op} is not supported with sets`, r.span);
    // Explicit protocol matches become context for the rest of the rule.
    if ((op === 'implicit' || op === '==') && right.kind === 'value') {
      if (left.kind === 'meta' && left.key === 'l4proto') this.l4From(Number(right.value), ctx);
      if (left.kind === 'ct' && left.key === 'protocol') ctx.ctProtocol = true;
      if (left.kind === 'payload' && left.field === 'type' && (left.protocol === 'icmp' || left.protocol === 'icmpv6') && right.kind === 'value') {
        // proto 0 (echo-reply) counts as echo, and icmpv6 echo-reply as echo-request.
        const t = Number(right.value);
        ctx.icmpType = left.protocol === 'icmp' ? (t === 0 ? 8 : t) : (t === 129 ? 128 : t);
      }
      if (left.kind === 'payload' && ((left.protocol === 'ip' && left.field === 'protocol') || (left.protocol === 'ip6' && left.field === 'nexthdr'))) this.l4From(Number(right.value), ctx);
      if (left.kind === 'meta' && left.key === 'nfproto') {
        // An explicit protocol match is never a conflict; it replaces the protocol in force.
        const l3 = right.value === 2n ? 'ip' : right.value === 10n ? 'ip6' : undefined;
        if (l3) ctx.l3 = l3;
      }
      if (left.kind === 'payload' && left.protocol === 'ether' && left.field === 'type') ctx.etherType = right.value;
      if ((left.kind === 'meta' && left.key === 'protocol') || (left.kind === 'payload' && (left.protocol === 'ether' || left.protocol === 'vlan') && left.field === 'type')) {
        const l3 = right.value === 0x0800n ? 'ip' : right.value === 0x86ddn ? 'ip6' : right.value === 0x0806n ? 'arp' : undefined;
        if (l3 && ctx.family !== 'ip' && ctx.family !== 'ip6' && ctx.family !== 'arp') ctx.l3 = l3;
      }
    }
    if (s.flagMask) {
      // `tcp flags syn / syn,ack`: (flags & mask) == value, the kernel's bitwise and compare.
      const st = selectorType(left);
      if (!BITMASK_TYPES.has(st.type) || left.kind === 'bitwise') fail('BAD_VALUE', 'a value / mask test needs a flag type', s.flagMask.span);
      const mask = this.flags(s.flagMask, st.type, st.bits);
      if (right.kind !== 'value') fail('BAD_VALUE', 'a value / mask test takes flags', r.span);
      return { kind: 'match', left: { kind: 'bitwise', operand: left, mask: mask.value, xor: 0n, bits: st.bits, type: st.type }, op: op === 'implicit' || op === 'neg' ? '==' : op, right: { ...right, value: right.value & mask.value }, span: s.span };
    }
    if (op === 'neg') {
      // `ct status ! dnat`: none of the flags is set.
      const st = selectorType(left);
      if (!BITMASK_TYPES.has(st.type) || right.kind !== 'value' || left.kind === 'bitwise') fail('BAD_VALUE', 'negation can only be used with singleton bitmask values', r.span);
      return { kind: 'match', left: { kind: 'bitwise', operand: left, mask: right.value, xor: 0n, bits: st.bits, type: st.type }, op: '==', right: { ...right, value: 0n }, span: s.span };
    }
    if (left.kind === 'bitwise' && op === 'implicit' && BITMASK_TYPES.has(left.type)) op = '==';
    return { kind: 'match', left, op: op as Exclude<RawOp, 'neg'>, right, span: s.span };
  }

  /** An explicit transport protocol match (`meta l4proto tcp`): never a conflict itself. */
  private l4From(n: number, ctx: RuleContext): void {
    establishL4(ctx, n);
  }
}

/** A transport protocol now in force, remembered among those the rule established. */
function establishL4(ctx: RuleContext, n: number): void {
  ctx.l4 = n;
  (ctx.l4Seen ??= []).push(n);
}

/** The match nft adds ahead of a rule that needs a network protocol (`meta nfproto`, `ether type`, `meta protocol`). */
function l3Dependency(family: NftFamily, l3: 'ip' | 'ip6'): NftStatement {
  if (family === 'inet') return { kind: 'match', left: { kind: 'meta', key: 'nfproto' }, op: 'implicit', right: { kind: 'value', type: 'nf_proto', bits: 8, value: l3 === 'ip' ? 2n : 10n } };
  const value = l3 === 'ip' ? 0x0800n : 0x86ddn;
  if (family === 'bridge') return { kind: 'match', left: { kind: 'payload', protocol: 'ether', field: 'type' }, op: 'implicit', right: { kind: 'value', type: 'ether_type', bits: 16, value } };
  return { kind: 'match', left: { kind: 'meta', key: 'protocol' }, op: 'implicit', right: { kind: 'value', type: 'ether_type', bits: 16, value } };
}

function isObjectType(t: NftType): boolean {
  return t === 'counter' || t === 'quota' || t === 'limit' || t === 'secmark' || t === 'synproxy';
}

/** Whether a map's data are ranges or prefixes: written so, or declared `: interval TYPE`. */
function mapHasIntervalData(m: NftMapLookup, table: MTable): boolean {
  if (m.mappings.kind === 'set') return m.mappings.elements.some((e) => e.data !== undefined && (e.data.kind === 'range' || e.data.kind === 'prefix'));
  const name = (m.mappings as NftSetRef).name;
  return table.sets.find((x) => x.name === name)?.dataInterval === true;
}

function isIntegerLike(t: NftType): boolean {
  return t === 'mark' || t === 'integer' || t === 'xinteger';
}

function containsSelector(e: RawExpr): boolean {
  if (e.t === 'sel') return true;
  if (e.t === 'binop') return containsSelector(e.left) || containsSelector(e.right);
  return false;
}

function bounds(k: NftValue | NftRange | NftPrefix): [bigint, bigint] {
  if (k.kind === 'value') return [k.value, k.value];
  if (k.kind === 'range') return [k.low.value, k.high.value];
  return [k.value.value, k.value.value | allOnes(k.value.bits - k.length)];
}

/** Adjacent and overlapping intervals of an `auto-merge` set, merged as nft merges them. */
function mergeIntervals(all: readonly NftElement[]): NftElement[] {
  const catchAll = all.filter((e) => e.key.length === 0);
  const elements = all.filter((e) => e.key.length !== 0);
  const sorted = [...elements].sort((a, b) => {
    const [al] = bounds(a.key[0]!);
    const [bl] = bounds(b.key[0]!);
    return al < bl ? -1 : al > bl ? 1 : 0;
  });
  const out: { lo: bigint; hi: bigint; e: NftElement }[] = [];
  for (const e of sorted) {
    const [lo, hi] = bounds(e.key[0]!);
    const last = out[out.length - 1];
    if (last && lo <= last.hi + 1n) {
      if (hi > last.hi) last.hi = hi;
      continue;
    }
    out.push({ lo, hi, e });
  }
  return out.map(({ lo, hi, e }) => {
    const k = e.key[0]!;
    const v = k.kind === 'value' ? k : k.kind === 'range' ? k.low : k.value;
    const [olo, ohi] = bounds(k);
    if (olo === lo && ohi === hi) return e;
    return { ...e, key: [lo === hi ? { ...v, value: lo } : { kind: 'range', low: { ...v, value: lo }, high: { ...v, value: hi } }] } as NftElement;
  }).concat(catchAll);
}

function rangeSplit(text: string): number {
  // The range separator is the first '-' that is neither leading nor part of a name.
  for (let i = 1; i < text.length - 1; i++) if (text[i] === '-') return i;
  return -1;
}

function keyTypes(sel: NftSelector): { type: NftType; bits: number }[] {
  if (sel.kind === 'concat') return sel.items.map((i) => selectorType(i));
  return [selectorType(sel)];
}

const TYPE_LABEL: Partial<Record<NftType, string>> = {
  ipv4_addr: 'IPv4 address', ipv6_addr: 'IPv6 address', inet_service: 'internet network service', mark: 'packet mark',
  inet_proto: 'Internet protocol', ifname: 'network interface name',
};

function checkKeyCompat(setKey: readonly NftType[], exprKey: readonly NftType[], span: Span): void {
  const compat = (a: NftType, b: NftType): boolean => a === b || a === 'integer' || b === 'integer' || a === 'xinteger' || b === 'xinteger' || (a === 'string' && b === 'ifname') || (a === 'ifname' && b === 'string');
  if (setKey.length !== exprKey.length || setKey.some((k, i) => !compat(k, exprKey[i]!))) {
    const exp = setKey.map((k) => TYPE_LABEL[k] ?? k).join(' . ');
    const got = exprKey.map((k) => TYPE_LABEL[k] ?? k).join(' . ');
    fail('BAD_VALUE', `datatype mismatch, expected ${exp}, expression has type ${got}`, span);
  }
}

/**
 * A table's chains by name, kept beside its chain list: chains are only appended (`push`) or the
 * list is replaced (`filter`), so the index follows appends and is rebuilt after a replacement.
 */
const chainIndex = new WeakMap<MTable, { list: MChain[]; readonly byName: Map<string, MChain> }>();

function chainNamed(t: MTable, name: string): MChain | undefined {
  let entry = chainIndex.get(t);
  if (entry === undefined || entry.list !== t.chains || entry.byName.size > t.chains.length) {
    entry = { list: t.chains, byName: new Map() };
    chainIndex.set(t, entry);
  }
  const { byName } = entry;
  for (let i = byName.size; i < t.chains.length; i++) {
    const c = t.chains[i]!;
    if (!byName.has(c.name)) byName.set(c.name, c);
  }
  return byName.get(name);
}

function partText(k: NftValue | NftRange | NftPrefix): string {
  if (k.kind === 'value') return k.type === 'ifname' || k.type === 'string' ? `"${k.text ?? ''}"` : `${k.value}`;
  if (k.kind === 'range') return `${k.low.value}-${k.high.value}`;
  return k.value.type === 'ifname' ? `"${k.value.text ?? ''}"` : `${k.value.value}/${k.length}`;
}

/** An element's key as text: equal for equal values, however they were written. */
function keyText(e: NftElement): string {
  if (e.key.length === 0) return '*';
  return e.key.map(partText).join(' . ');
}

/** A map element's data as text (empty for a set's element). */
function dataText(e: NftElement): string {
  const d = e.data;
  if (d === undefined) return '';
  if (d.kind === 'verdict') return `${d.verdict} ${d.chain ?? ''}`;
  if (d.kind === 'concat-value') return d.items.map(partText).join(' . ');
  return partText(d);
}

/** The keys of a set's elements, kept beside its element list (rebuilt when the list was replaced). */
const setKeys = new WeakMap<MSet, { readonly list: NftElement[]; readonly keys: Map<string, NftElement> }>();

function keysOf(set: MSet): Map<string, NftElement> {
  let entry = setKeys.get(set);
  if (entry === undefined || entry.list !== set.elements || entry.keys.size !== set.elements.length) {
    entry = { list: set.elements, keys: new Map(set.elements.map((e) => [keyText(e), e])) };
    setKeys.set(set, entry);
  }
  return entry.keys;
}

function countAnonSets(s: NftStatement): number {
  switch (s.kind) {
    case 'match': return s.right.kind === 'set' ? 1 : 0;
    case 'vmap': return s.mappings.kind === 'set' ? 1 : 0;
    case 'nat': return (s.addr?.kind === 'map' && s.addr.mappings.kind === 'set' ? 1 : 0) + (s.port?.kind === 'map' && s.port.mappings.kind === 'set' ? 1 : 0);
    case 'mangle': return s.value.kind === 'map' && s.value.mappings.kind === 'set' ? 1 : 0;
    case 'objref': return s.map?.mappings.kind === 'set' ? 1 : 0;
    default: return 0;
  }
}
