/**
 * Evaluation: parsed commands → the rule set the kernel holds, as nft's `evaluate.c` and the
 * kernel's transaction do it. Symbols take the type of what they are compared with, bitwise
 * operations fold into `(x & mask) ^ xor`, protocol context is tracked through a rule
 * (`conflicting protocols specified`), and commands that name missing tables, chains or sets
 * are refused at their position.
 *
 * @module
 */
import { diagnostic, type Diagnostic, type ErrorCode } from '../model/errors.js';
import type { Span } from '../model/types.js';
import { BITMASK_TYPES, DatatypeError, allOnes, ifnameWildcardBits, parseSymbol, selectorType } from './datatypes.js';
import type {
  NftAnonSet, NftBaseChain, NftChain, NftElement, NftFamily, NftHook, NftMapLookup, NftPrefix, NftRange, NftRight, NftRule, NftRuleset,
  NftSelector, NftSet, NftSetRef, NftStatement, NftTable, NftType, NftValue, NftVerdict,
} from './model.js';
import type { RawChainSpec, RawCommand, RawElement, RawExpr, RawSetSpec, RawStatement } from './syntax/ast.js';

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

/** Set-declaration type names, their model type and width. */
const SET_TYPES: Readonly<Record<string, { type: NftType; bits: number }>> = {
  ipv4_addr: { type: 'ipv4_addr', bits: 32 }, ipv6_addr: { type: 'ipv6_addr', bits: 128 }, inet_service: { type: 'inet_service', bits: 16 },
  inet_proto: { type: 'inet_proto', bits: 8 }, mark: { type: 'mark', bits: 32 }, ifname: { type: 'ifname', bits: 128 },
  uid: { type: 'uid', bits: 32 }, gid: { type: 'gid', bits: 32 }, ct_state: { type: 'ct_state', bits: 32 },
  iface_index: { type: 'iface_index', bits: 32 }, verdict: { type: 'verdict', bits: 0 }, nf_proto: { type: 'nf_proto', bits: 8 },
  integer: { type: 'integer', bits: 32 },
};

/** Widths of the types. */
export function typeBits(t: NftType): number {
  return SET_TYPES[t]?.bits ?? 32;
}

const STD_PRIORITIES: readonly (readonly [string, number])[] = [
  ['raw', -300], ['mangle', -150], ['dstnat', -100], ['filter', 0], ['security', 50], ['srcnat', 100],
];

/** Whether nft uses a standard priority name at this hook (`std_prio_family_hook_compat`). */
export function priorityNameFits(name: string, hook: NftHook): boolean {
  if (name === 'dstnat') return hook === 'prerouting';
  if (name === 'srcnat') return hook === 'postrouting';
  return true;
}

function parsePriority(raw: RawExpr, hook: NftHook): number {
  if (raw.t !== 'sym') return fail('BAD_VALUE', 'priority must be a number or a priority name', raw.span);
  if (/^-?[0-9]+$/.test(raw.text)) {
    const n = Number(raw.text);
    if (n < -2147483648 || n > 2147483647) fail('BAD_VALUE', `priority value ${raw.text} out of range`, raw.span, raw.text);
    return n;
  }
  const m = /^([a-z]+)(?: ([+-]) ([0-9]+))?$/.exec(raw.text);
  const std = m ? STD_PRIORITIES.find(([n]) => n === m[1]) : undefined;
  if (!m || !std || !priorityNameFits(std[0], hook)) fail('BAD_VALUE', `'${raw.text.split(' ')[0]}' is invalid priority in this context.`, raw.span, raw.text);
  const off = m[3] ? Number(m[3]) : 0;
  return std[1] + (m[2] === '-' ? -off : off);
}

interface MTable {
  family: NftFamily;
  name: string;
  handle: number;
  nextHandle: number;
  sets: MSet[];
  chains: MChain[];
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
}
interface MSet {
  name: string;
  handle: number;
  key: NftType[];
  keyBits: number[];
  data?: NftType;
  flags: ('constant' | 'interval' | 'timeout' | 'dynamic')[];
  elements: NftElement[];
  comment?: string;
  size?: number;
  span?: Span;
}

/** Protocol context through one rule (nft's `proto_ctx`). */
interface RuleContext {
  readonly family: NftFamily;
  readonly table: MTable;
  l3?: 'ip' | 'ip6';
  l4?: number;
}

/** Reject codes by name (`icmp_code_type`, `icmpv6_code_type`, `icmpx_code_type`). */
const REJECT_CODES: Readonly<Record<string, readonly (readonly [string, number])[]>> = {
  icmp: [['net-unreachable', 0], ['host-unreachable', 1], ['prot-unreachable', 2], ['port-unreachable', 3], ['frag-needed', 4],
    ['net-prohibited', 9], ['host-prohibited', 10], ['admin-prohibited', 13]],
  icmpv6: [['no-route', 0], ['admin-prohibited', 1], ['addr-unreachable', 3], ['port-unreachable', 4], ['policy-fail', 5], ['reject-route', 6]],
  icmpx: [['no-route', 0], ['port-unreachable', 1], ['host-unreachable', 2], ['admin-prohibited', 3]],
};

const L4_NUMBERS: Readonly<Record<string, number>> = { tcp: 6, udp: 17, sctp: 132, icmp: 1, icmpv6: 58 };
const L4_NAMES: Readonly<Record<number, string>> = { 6: 'tcp', 17: 'udp', 132: 'sctp', 1: 'icmp', 58: 'icmpv6' };

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
}

/** Runs the commands in order against an empty (or given) rule set. Stops at the first error. */
export function evaluateNftCommands(commands: readonly RawCommand[], options: NftEvaluateOptions = {}): NftEvaluation {
  const ev = new Evaluator(options.base);
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

  constructor(base?: NftRuleset) {
    if (base) {
      for (const t of base.tables) {
        const handles = [t.handle, ...t.sets.map((s) => s.handle), ...t.chains.flatMap((c) => [c.handle, ...c.rules.map((r) => r.handle)])];
        this.tables.push({
          family: t.family, name: t.name, handle: t.handle, nextHandle: Math.max(0, ...handles) + 1,
          sets: t.sets.map((s) => ({ ...s, key: [...s.key], keyBits: s.key.map(typeBits), flags: [...s.flags], elements: [...s.elements] }) as MSet),
          chains: t.chains.map((c) => ({ ...c, rules: [...c.rules] }) as MChain),
        });
        this.nextTableHandle = Math.max(this.nextTableHandle, t.handle + 1);
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
        })),
        chains: t.chains.map((c): NftChain => ({
          name: c.name, handle: c.handle, ...(c.base ? { base: c.base } : {}), rules: c.rules,
          ...(c.comment !== undefined ? { comment: c.comment } : {}), ...(c.span ? { span: c.span } : {}),
        })),
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
        this.tables = [];
        return;
      case 'table': return this.tableCommand(c);
      case 'chain': return this.chainCommand(c);
      case 'set': return this.setCommand(c);
      case 'element': return this.elementCommand(c);
      case 'rule': return this.ruleCommand(c);
    }
  }

  private tableCommand(c: Extract<RawCommand, { c: 'table' }>): void {
    const existing = this.tables.find((x) => x.family === c.family && x.name === c.table);
    switch (c.op) {
      case 'add': case 'create':
        if (existing) {
          if (c.op === 'create') { this.commitFail('CHAIN_EXISTS', `Could not process rule: File exists`, c.span, c.table); return; }
          return;
        }
        if (c.table.length > 255) fail('BAD_VALUE', 'table name too long', c.span, c.table);
        this.tables.push({ family: c.family, name: c.table, handle: this.nextTableHandle++, nextHandle: 1, sets: [], chains: [], ...(c.comment !== undefined ? { comment: c.comment } : {}), span: c.span });
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
        const t = existing;
        for (const ch of t.chains) ch.rules = [];
        for (const s of t.sets) s.elements = [];
        return;
      }
    }
  }

  private chainCommand(c: Extract<RawCommand, { c: 'chain' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const existing = chainNamed(t, c.chain);
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
        t.chains = t.chains.filter((x) => x !== existing);
        return;
      }
      case 'flush': {
        const ch = existing ?? this.findChain(t, c.chain, c.nameSpan);
        ch.rules = [];
        return;
      }
    }
  }

  private baseChain(t: MTable, spec: RawChainSpec): NftBaseChain | undefined {
    if (!spec.type) return undefined;
    const { type, hook } = spec.type;
    const priority = parsePriority(spec.type.priority, hook);
    let policy: 'accept' | 'drop' = 'accept';
    if (spec.policy) {
      if (spec.policy.policy !== 'accept' && spec.policy.policy !== 'drop') fail('BAD_POLICY', `syntax error, unexpected ${spec.policy.policy}, expecting accept or drop`, spec.policy.span, spec.policy.policy);
      policy = spec.policy.policy;
    }
    void t;
    return { type, hook, priority, policy };
  }

  private setCommand(c: Extract<RawCommand, { c: 'set' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const existing = t.sets.find((s) => s.name === c.name);
    switch (c.op) {
      case 'add': case 'create': {
        if (existing) {
          if (c.op === 'create') { this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', c.span, c.name); return; }
          if (c.spec?.elements) this.addElements(existing, c.spec.elements);
          return;
        }
        const spec = c.spec as RawSetSpec;
        if (!spec.key) fail('BAD_VALUE', `${c.map ? 'map' : 'set'} definition does not specify key`, c.nameSpan, c.name);
        const key: NftType[] = [];
        const keyBits: number[] = [];
        for (const name of spec.key.types) {
          const st = SET_TYPES[name];
          if (!st || st.type === 'verdict') fail('UNSUPPORTED', `unknown datatype ${name}`, spec.key.span, name);
          key.push(st.type);
          keyBits.push(st.bits);
        }
        const set: MSet = { name: c.name, handle: t.nextHandle++, key, keyBits, flags: [], elements: [], span: c.nameSpan };
        if (c.map) {
          if (!spec.data) fail('BAD_VALUE', 'map definition does not specify data type', c.nameSpan, c.name);
          const dt = SET_TYPES[spec.data.type];
          if (!dt) fail('UNSUPPORTED', `unknown datatype ${spec.data.type}`, spec.data.span, spec.data.type);
          set.data = dt.type;
        }
        for (const f of spec.flags) {
          if (f.flag !== 'interval' && f.flag !== 'constant' && f.flag !== 'timeout' && f.flag !== 'dynamic') fail('UNEXPECTED_TOKEN', `syntax error, unexpected ${f.flag}`, f.span, f.flag);
          if (!set.flags.includes(f.flag)) set.flags.push(f.flag);
        }
        if (spec.comment !== undefined) set.comment = spec.comment;
        if (spec.size !== undefined) set.size = spec.size;
        t.sets.push(set);
        if (spec.elements) this.addElements(set, spec.elements);
        return;
      }
      case 'delete':
        if (!existing) { this.commitFail('UNKNOWN_CHAIN', 'Could not process rule: No such file or directory', c.span, c.name); return; }
        t.sets = t.sets.filter((s) => s !== existing);
        return;
      case 'flush': {
        if (!existing) fail('UNKNOWN_CHAIN', `No such file or directory; set '${c.name}' does not exist`, c.nameSpan, c.name);
        existing.elements = [];
        return;
      }
    }
  }

  private elementCommand(c: Extract<RawCommand, { c: 'element' }>): void {
    const t = this.findTable(c.family, c.table, c.span);
    const set = t.sets.find((s) => s.name === c.name);
    if (!set) fail('UNKNOWN_CHAIN', `No such file or directory; did you mean set '${c.name}'?`, c.nameSpan, c.name);
    if (c.op === 'add') this.addElements(set, c.elements);
    else {
      const ctx: RuleContext = { family: t.family, table: t };
      const gone = this.elements(c.elements, set.key, set.keyBits, set.data, ctx, set.flags.includes('interval'));
      const goneKeys = new Set(gone.map(keyText));
      set.elements = set.elements.filter((e) => !goneKeys.has(keyText(e)));
    }
  }

  private addElements(set: MSet, raw: RawExpr): void {
    const t = this.tables.find((x) => x.sets.includes(set))!;
    const ctx: RuleContext = { family: t.family, table: t };
    const elems = this.elements(raw, set.key, set.keyBits, set.data, ctx, set.flags.includes('interval'))
      .map((e) => ({ ...e, key: e.key.map((k) => (k.kind === 'prefix' && k.length === k.value.bits ? k.value : k)) }));
    const spans = raw.t === 'set' ? raw.elements.map((e) => e.span) : [];
    elems.forEach((e, i) => {
      const interval = e.key.find((k) => k.kind !== 'value');
      if (!set.flags.includes('interval') && interval) {
        fail('BAD_VALUE', `You must add 'flags interval' to your ${set.data !== undefined ? 'map' : 'set'} declaration if you want to add ${interval.kind} elements`, spans[i] ?? raw.span);
      }
      if (set.flags.includes('interval') && e.key.length === 1) {
        const [lo, hi] = bounds(e.key[0]!);
        for (const x of set.elements) {
          const [xl, xh] = bounds(x.key[0]!);
          if (lo === xl && hi === xh) continue;
          if (lo <= xh && xl <= hi) fail('BAD_VALUE', 'conflicting intervals specified', spans[i] ?? raw.span);
        }
      }
      const keys = keysOf(set);
      const k = keyText(e);
      const old = keys.get(k);
      if (old === undefined) {
        keys.set(k, e);
        set.elements.push(e);
      } else if (dataText(old) !== dataText(e)) {
        // nft_add_set_elem: the key is there with other data: EEXIST, even without NLM_F_EXCL.
        this.commitFail('CHAIN_EXISTS', 'Could not process rule: File exists', spans[i] ?? raw.span);
      }
    });
  }

  private elements(raw: RawExpr, key: readonly NftType[], keyBits: readonly number[], data: NftType | undefined, ctx: RuleContext, interval: boolean): NftElement[] {
    if (raw.t !== 'set') fail('BAD_VALUE', 'syntax error, expecting set', raw.span);
    void interval;
    return raw.elements.map((e) => this.element(e, key, keyBits, data, ctx));
  }

  private element(e: RawElement, key: readonly NftType[], keyBits: readonly number[], data: NftType | undefined, ctx: RuleContext): NftElement {
    const parts = e.key.t === 'concat' ? e.key.items : [e.key];
    if (parts.length !== key.length) fail('BAD_VALUE', `datatype mismatch, expected ${key.length > 1 ? 'concatenation' : key[0]}`, e.key.span);
    const k = parts.map((p, i) => this.constant(p, key[i]!, keyBits[i]!, true));
    const counter = { ...(e.counter ? { counter: e.counter } : {}), ...(e.comment !== undefined ? { comment: e.comment } : {}) };
    if (data === undefined) {
      if (e.data) fail('BAD_VALUE', 'set element has data but the set is not a map', e.data.span);
      return { key: k, ...counter };
    }
    if (!e.data) fail('BAD_VALUE', 'map element needs data: KEY : VALUE', e.span);
    if (data === 'verdict') {
      if (e.data.t !== 'verdict') fail('BAD_VALUE', 'datatype mismatch, expected verdict', e.data.span);
      return { key: k, data: this.verdict(e.data, ctx), ...counter };
    }
    const v = this.constant(e.data, data, typeBits(data), false);
    if (v.kind !== 'value') fail('BAD_VALUE', 'map data must be a single value', e.data.span);
    return { key: k, data: v, ...counter };
  }

  private verdict(raw: Extract<RawExpr, { t: 'verdict' }>, ctx: RuleContext): NftVerdict {
    void ctx;
    return { kind: 'verdict', verdict: raw.verdict, ...(raw.chain !== undefined ? { chain: raw.chain } : {}) };
  }

  /** A constant of a type: a value, a range or a prefix. */
  private constant(raw: RawExpr, type: NftType, bits: number, allowInterval: boolean): NftValue | NftRange | NftPrefix {
    if (raw.t === 'list' || raw.t === 'binop') {
      if (!BITMASK_TYPES.has(type)) fail('BAD_VALUE', `Could not parse ${type}: a list of values is only valid for flags`, raw.span);
      return this.flags(raw, type, bits);
    }
    if (raw.t !== 'sym') fail('BAD_VALUE', `syntax error, unexpected ${raw.t === 'set' ? 'set' : raw.t}, expecting value`, raw.span);
    const text = raw.text;
    const sym = (s: string): NftValue => {
      try {
        return parseSymbol(s, type, bits, raw.quoted);
      } catch (e) {
        if (e instanceof DatatypeError) fail('BAD_VALUE', e.message, raw.span, raw.text);
        throw e;
      }
    };
    if (!raw.quoted && (type === 'ipv4_addr' || type === 'ipv6_addr') && text.includes('/')) {
      const [a, l] = text.split('/') as [string, string];
      const len = /^[0-9]+$/.test(l) ? Number(l) : NaN;
      if (!(len >= 0 && len <= bits)) fail('BAD_VALUE', `Could not parse prefix length: ${l}`, raw.span, text);
      const v = sym(a);
      const mask = len === 0 ? 0n : allOnes(bits) ^ allOnes(bits - len);
      const value: NftValue = { ...v, value: v.value & mask };
      // A full-length prefix is one address, but it makes an anonymous set an interval set.
      if (len === bits && !allowInterval) return value;
      if (!allowInterval && false) fail('BAD_VALUE', 'prefix not allowed here', raw.span);
      return { kind: 'prefix', value, length: len, ...(value.value !== v.value ? { hostBits: true } : {}) };
    }
    if (!raw.quoted && type !== 'ifname' && text.includes('-') && !/^-/.test(text)) {
      try {
        return parseSymbol(text, type, bits);
      } catch {
        const i = rangeSplit(text);
        if (i > 0) {
          const lo = sym(text.slice(0, i));
          const hi = sym(text.slice(i + 1));
          if (lo.value > hi.value) fail('BAD_VALUE', 'Range has zero or negative size', raw.span, text);
          if (lo.value === hi.value) return lo;
          return { kind: 'range', low: lo, high: hi };
        }
      }
    }
    if (type === 'ifname') {
      const v = sym(text);
      const wild = ifnameWildcardBits(v);
      if (wild === undefined) return v;
      // `eth*`: the names that start with `eth`, an interval of the key (a prefix of its bytes).
      if (!allowInterval) fail('BAD_VALUE', 'Value must be a singleton', raw.span, text);
      return { kind: 'prefix', value: v, length: wild };
    }
    return sym(text);
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
      chain.rules.splice(idx, 1);
      return;
    }
    const ctx: RuleContext = { family: t.family, table: t, ...(t.family === 'inet' ? {} : { l3: t.family === 'ip' ? 'ip' : 'ip6' }) };
    const statements: NftStatement[] = [];
    let comment: string | undefined;
    for (const s of c.statements) {
      if (s.t === 'comment') {
        comment = s.text;
        continue;
      }
      const before = ctx.l3;
      const st = this.statement(s, ctx);
      if (st.kind === 'reject' && ctx.family === 'inet' && before === undefined && (st.with?.type === 'icmp' || st.with?.type === 'icmpv6')) {
        // nft puts the network protocol an icmp reject needs at the start of the rule.
        statements.unshift({ kind: 'match', left: { kind: 'meta', key: 'nfproto' }, op: 'implicit', right: { kind: 'value', type: 'nf_proto', bits: 8, value: st.with.type === 'icmp' ? 2n : 10n } });
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
          chain.rules[idx] = rule;
          return;
        }
        position = c.op === 'insert' ? idx : idx + 1;
      }
    } else if (c.op === 'insert') position = 0;
    const rule: NftRule = { handle: t.nextHandle++, statements, ...(comment !== undefined ? { comment } : {}), span: c.span };
    chain.rules.splice(position, 0, rule);
  }

  private statement(s: RawStatement, ctx: RuleContext): NftStatement {
    switch (s.t) {
      case 'match': return this.match(s, ctx);
      case 'verdict': return { kind: 'verdict', verdict: s.verdict, ...(s.chain !== undefined ? { chain: s.chain } : {}), span: s.chainSpan ?? s.span };
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
        return { kind: 'log', ...rest };
      }
      case 'limit': {
        if (s.rate === 0) fail('BAD_VALUE', 'limit rate must be greater than 0', s.span);
        return { kind: 'limit', rate: s.rate, unit: s.unit, over: s.over, burst: s.burst ?? 5, span: s.span };
      }
      case 'reject': return this.reject(s, ctx);
      case 'nat': return this.nat(s, ctx);
      case 'tproxy': return this.tproxy(s, ctx);
      case 'mangle': return this.mangle(s, ctx);
      case 'notrack': return { kind: 'notrack', span: s.span };
      case 'comment': return fail('UNEXPECTED_TOKEN', 'comment', s.span);
    }
  }

  private reject(s: Extract<RawStatement, { t: 'reject' }>, ctx: RuleContext): NftStatement {
    if (!s.with) {
      // nft picks the ICMP flavour from the family or the rule's network protocol.
      const l3 = ctx.family === 'inet' ? ctx.l3 : ctx.family;
      const type = l3 === 'ip' ? 'icmp' : l3 === 'ip6' ? 'icmpv6' : 'icmpx';
      return { kind: 'reject', with: { type, code: 'port-unreachable' }, span: s.span };
    }
    if (s.with.type === 'tcp-reset') {
      if (ctx.l4 !== undefined && ctx.l4 !== 6) fail('BAD_VALUE', 'conflicting protocols specified: tcp vs. ' + (L4_NAMES[ctx.l4] ?? ctx.l4), s.span);
      return { kind: 'reject', with: { type: 'tcp-reset' }, span: s.span };
    }
    const type = s.with.type;
    if (type === 'icmp' && ctx.l3 === 'ip6') fail('BAD_VALUE', 'conflicting protocols specified: ip6 vs. ip', s.span);
    if (type === 'icmpv6' && ctx.l3 === 'ip') fail('BAD_VALUE', 'conflicting protocols specified: ip vs. ip6', s.span);
    if (type === 'icmpx' && ctx.family !== 'inet') fail('BAD_VALUE', 'icmpx reject codes are for inet tables', s.span);
    const raw = s.with.code!;
    const names = REJECT_CODES[type]!;
    const text = raw.t === 'sym' ? raw.text : '';
    const byNumber = /^[0-9]+$/.test(text) ? names.find(([, n]) => n === Number(text)) : undefined;
    const hit = byNumber ?? names.find(([n]) => n === text);
    if (!hit) fail('BAD_VALUE', `Could not parse ${type === 'icmpx' ? 'ICMPX' : type === 'icmp' ? 'ICMP' : 'ICMPv6'} code`, raw.span, text);
    if (ctx.family === 'inet') {
      if (type === 'icmp') ctx.l3 = 'ip';
      if (type === 'icmpv6') ctx.l3 = 'ip6';
    }
    return { kind: 'reject', with: { type, code: hit[0] }, span: s.span };
  }

  private nat(s: Extract<RawStatement, { t: 'nat' }>, ctx: RuleContext): NftStatement {
    let family = s.family;
    if (family && ctx.family !== 'inet' && family !== ctx.family) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.family} vs. ${family}`, s.span);
    if (s.port && ctx.l4 === undefined) {
      fail('BAD_VALUE', 'transport protocol mapping is only valid after transport protocol match', s.port.span);
    }
    let addr: NftValue | NftRange | NftPrefix | NftMapLookup | undefined;
    if (s.addr) {
      if (ctx.family === 'inet' && !family) {
        if (ctx.l3) family = ctx.l3;
        else if (s.addr.t === 'sym') family = s.addr.text.includes(':') ? 'ip6' : 'ip';
      }
      const fam = ctx.family === 'inet' ? family : ctx.family;
      if (!fam) fail('BAD_VALUE', `specify \`${s.type} ip\` or '${s.type} ip6' in inet table to disambiguate`, s.span);
      if (ctx.l3 && fam !== ctx.l3) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.l3} vs. ${fam}`, s.span);
      const type: NftType = fam === 'ip6' ? 'ipv6_addr' : 'ipv4_addr';
      const bits = fam === 'ip6' ? 128 : 32;
      if (s.addr.t === 'map') {
        const key = this.selectorExpr(s.addr.key, ctx);
        const mappings = this.mappings(s.addr.mappings, keyTypes(key), type, ctx, s.addr.span);
        addr = { kind: 'map', key, mappings, dataType: type, dataBits: bits };
      } else {
        addr = this.constant(s.addr, type, bits, true);
        if (addr.kind === 'prefix' && addr.length === bits) addr = addr.value;
      }
    }
    let port: NftValue | NftRange | undefined;
    if (s.port) {
      const p = this.constant(s.port, 'inet_service', 16, true);
      if (p.kind === 'prefix') fail('BAD_VALUE', 'port ranges are written low-high', s.port.span);
      port = p;
    }
    const inetFamily = ctx.family === 'inet' && (s.type === 'snat' || s.type === 'dnat') ? family : undefined;
    return { kind: 'nat', type: s.type, ...(inetFamily ? { family: inetFamily } : {}), ...(addr ? { addr } : {}), ...(port ? { port } : {}), flags: s.flags, span: s.span };
  }

  private tproxy(s: Extract<RawStatement, { t: 'tproxy' }>, ctx: RuleContext): NftStatement {
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
    if (target.t !== 'sel' || (target.sel.kind !== 'meta' && target.sel.kind !== 'ct')) fail('UNSUPPORTED', 'only meta and ct keys can be set', s.span);
    const sel = target.sel;
    const settable = sel.kind === 'meta' ? ['mark'].includes(sel.key) : ['mark', 'zone'].includes(sel.key) && !sel.direction;
    if (!settable) fail('UNSUPPORTED', `${sel.kind} ${sel.key} cannot be set by netfilter-sim`, target.span);
    const st = selectorType(sel);
    const v = s.value;
    if (v.t === 'sel') {
      const src = v.sel;
      if (src.kind !== 'meta' && src.kind !== 'ct' && src.kind !== 'numgen') fail('BAD_VALUE', 'datatype mismatch', v.span);
      return { kind: 'mangle', target: sel, value: this.selectorExpr(v, ctx) as NftStatement & never, span: s.span };
    }
    if (v.t === 'binop') {
      const b = this.selectorExpr(v, ctx);
      if (b.kind !== 'bitwise') fail('BAD_VALUE', 'bitwise expression expected', v.span);
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

  private mappings(raw: RawExpr, key: readonly { type: NftType; bits: number }[], data: NftType, ctx: RuleContext, span: Span): NftAnonSet | NftSetRef {
    if (raw.t === 'setref') {
      const set = ctx.table.sets.find((s) => s.name === raw.name);
      if (!set) fail('UNKNOWN_CHAIN', `No such file or directory; did you mean map '${raw.name}'?`, raw.span, raw.name);
      if (set.data === undefined) fail('BAD_VALUE', `Expression is not a map`, raw.span, raw.name);
      if (set.data !== data && !(data === 'mark' && set.data === 'mark')) fail('BAD_VALUE', `datatype mismatch, map expects ${set.data}, mapping expression has type ${data}`, raw.span, raw.name);
      checkKeyCompat(set.key, key.map((k) => k.type), raw.span);
      return { kind: 'setref', name: raw.name };
    }
    if (raw.t !== 'set') fail('BAD_VALUE', 'map expects a set of mappings', raw.span);
    const elements = raw.elements.map((e) => this.element(e, key.map((k) => k.type), key.map((k) => k.bits), data, ctx));
    if (elements.length === 0) fail('BAD_VALUE', 'empty map', span);
    return { kind: 'set', elements, key: key.map((k) => k.type), interval: elements.some((e) => e.key.some((k) => k.kind !== 'value')) };
  }

  /** A left-hand expression: a selector with bitwise operations folded, or a concatenation. */
  private selectorExpr(raw: RawExpr, ctx: RuleContext): NftSelector {
    switch (raw.t) {
      case 'sel':
        this.context(raw.sel, raw.span, ctx);
        return raw.sel;
      case 'concat':
        return { kind: 'concat', items: raw.items.map((i) => this.selectorExpr(i, ctx)) };
      case 'binop': {
        const left = this.selectorExpr(raw.left, ctx);
        const st = selectorType(left);
        if (left.kind === 'concat') fail('BAD_VALUE', 'bitwise operations on concatenations are not supported', raw.span);
        const ones = allOnes(st.bits);
        const operand = left.kind === 'bitwise' ? left.operand : left;
        let mask = left.kind === 'bitwise' ? left.mask : ones;
        let xor = left.kind === 'bitwise' ? left.xor : 0n;
        if (st.type === 'ifname' || st.type === 'ipv4_addr' || st.type === 'ipv6_addr' || st.type === 'inet_service') {
          if (st.type === 'ifname') fail('BAD_VALUE', 'Binary operation is not supported for string types', raw.span);
        }
        const c = this.flags(raw.right, st.type === 'ct_state' || st.type === 'tcp_flag' || st.type === 'ct_status' ? st.type : st.type, st.bits);
        switch (raw.op) {
          case '&': mask &= c.value; xor &= c.value; break;
          case '|': mask &= ones ^ c.value; xor |= c.value; break;
          case '^': xor ^= c.value; break;
        }
        return { kind: 'bitwise', operand, mask, xor, bits: st.bits, type: st.type };
      }
      default:
        return fail('UNEXPECTED_TOKEN', 'syntax error, expecting a selector', raw.span);
    }
  }

  /** Protocol context: what a payload implies and where it conflicts. */
  private context(sel: NftSelector, span: Span, ctx: RuleContext): void {
    if (sel.kind === 'payload') {
      if (sel.protocol === 'ip' || sel.protocol === 'ip6') {
        if (ctx.l3 && ctx.l3 !== sel.protocol) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.l3} vs. ${sel.protocol}`, span);
        ctx.l3 = sel.protocol;
        return;
      }
      if (sel.protocol === 'th') return;
      const n = L4_NUMBERS[sel.protocol]!;
      if (sel.protocol === 'icmp' && ctx.l3 === 'ip6') fail('BAD_VALUE', `conflicting protocols specified: ip6 vs. icmp`, span);
      if (sel.protocol === 'icmpv6' && ctx.l3 === 'ip') fail('BAD_VALUE', `conflicting protocols specified: ip vs. icmpv6`, span);
      if (ctx.l4 !== undefined && ctx.l4 !== n) fail('BAD_VALUE', `conflicting protocols specified: ${L4_NAMES[ctx.l4] ?? ctx.l4} vs. ${sel.protocol}`, span);
      ctx.l4 = n;
      if (ctx.family === 'inet' && sel.protocol === 'icmp') ctx.l3 = 'ip';
      if (ctx.family === 'inet' && sel.protocol === 'icmpv6') ctx.l3 = 'ip6';
    }
    if (sel.kind === 'ct' && (sel.key === 'saddr' || sel.key === 'daddr') && !sel.family) {
      if (ctx.family === 'inet') fail('BAD_VALUE', 'ct original/reply addresses need ip or ip6 in an inet table', span);
    }
  }

  private match(s: Extract<RawStatement, { t: 'match' }>, ctx: RuleContext): NftStatement {
    let left = this.selectorExpr(s.left, ctx);
    if (left.kind === 'ct' && (left.key === 'saddr' || left.key === 'daddr') && !left.family) left = { ...left, family: ctx.family === 'ip6' ? 'ip6' : 'ip' };
    if (left.kind === 'ct' && left.family && ctx.family !== 'inet' && left.family !== ctx.family) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.family} vs. ${left.family}`, s.left.span);
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
    } else if (left.kind === 'fib' && left.result !== 'type' && r.t === 'sym' && (r.text === 'exists' || r.text === 'missing')) {
      right = { kind: 'value', type: 'boolean', bits: 1, value: r.text === 'exists' ? 1n : 0n };
    } else {
      if (left.kind === 'concat') fail('BAD_VALUE', 'datatype mismatch, expected concatenation', r.span);
      const st = selectorType(left);
      right = this.constant(r, st.type, st.bits, true);
      if (right.kind === 'prefix' && right.length === st.bits) right = right.value;
    }
    let op = s.op;
    if (left.kind === 'bitwise' && left.mask === allOnes(left.bits) && right.kind === 'value' && (op === '==' || op === '!=' || op === 'implicit')) {
      // nft folds a pure xor into the constant: `mark ^ 3 == 1` is `mark 2`.
      right = { ...right, value: right.value ^ left.xor };
      left = left.operand;
    }
    if (right.kind === 'range' && (op === '<' || op === '>' || op === '<=' || op === '>=')) fail('BAD_VALUE', 'Relational expression size mismatch', r.span);
    // Explicit protocol matches become context for the rest of the rule.
    if ((op === 'implicit' || op === '==') && right.kind === 'value') {
      if (left.kind === 'meta' && left.key === 'l4proto') this.l4From(Number(right.value), ctx, s.left.span);
      if (left.kind === 'payload' && ((left.protocol === 'ip' && left.field === 'protocol') || (left.protocol === 'ip6' && left.field === 'nexthdr'))) this.l4From(Number(right.value), ctx, s.left.span);
      if (left.kind === 'meta' && left.key === 'nfproto') {
        const l3 = right.value === 2n ? 'ip' : right.value === 10n ? 'ip6' : undefined;
        if (l3 && ctx.l3 && ctx.l3 !== l3) fail('BAD_VALUE', `conflicting protocols specified: ${ctx.l3} vs. ${l3}`, s.left.span);
        if (l3) ctx.l3 = l3;
      }
    }
    let flagMask: NftValue | undefined;
    if (s.flagMask) {
      const st = selectorType(left);
      if (!BITMASK_TYPES.has(st.type)) fail('BAD_VALUE', 'a value / mask test needs a flag type', s.flagMask.span);
      flagMask = this.flags(s.flagMask, st.type, st.bits);
    }
    return { kind: 'match', left, op, right, span: s.span, ...(flagMask ? { flagMask } : {}) };
  }

  private l4From(n: number, ctx: RuleContext, span: Span): void {
    if (ctx.l4 !== undefined && ctx.l4 !== n) fail('BAD_VALUE', `conflicting protocols specified: ${L4_NAMES[ctx.l4] ?? ctx.l4} vs. ${L4_NAMES[n] ?? n}`, span);
    ctx.l4 = n;
  }
}

function bounds(k: NftValue | NftRange | NftPrefix): [bigint, bigint] {
  if (k.kind === 'value') return [k.value, k.value];
  if (k.kind === 'range') return [k.low.value, k.high.value];
  return [k.value.value, k.value.value | allOnes(k.value.bits - k.length)];
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
  const compat = (a: NftType, b: NftType): boolean => a === b || a === 'integer' || b === 'integer';
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

/** An element's key as text: equal for equal values, however they were written. */
function keyText(e: NftElement): string {
  return e.key.map((k) => (k.kind === 'value' ? (k.type === 'ifname' ? `"${k.text ?? ''}"` : `${k.value}`) : k.kind === 'range' ? `${k.low.value}-${k.high.value}` : `${k.value.value}/${k.length}`)).join(' . ');
}

/** A map element's data as text (empty for a set's element). */
function dataText(e: NftElement): string {
  const d = e.data;
  if (d === undefined) return '';
  return d.kind === 'verdict' ? `${d.verdict} ${d.chain ?? ''}` : `${d.value}`;
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
    case 'nat': return s.addr?.kind === 'map' && s.addr.mappings.kind === 'set' ? 1 : 0;
    case 'mangle': return s.value.kind === 'map' && s.value.mappings.kind === 'set' ? 1 : 0;
    default: return 0;
  }
}
