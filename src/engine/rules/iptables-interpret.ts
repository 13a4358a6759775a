/**
 * The reference interpreter: the same semantics as the lowered evaluator, written over the model
 * as plainly as possible, by name and without precomputation. It is the readable definition the
 * fast path is tested against.
 *
 * @module
 */
import type { PacketView } from '../../model/packet.js';
import { TABLE_NAMES } from '../../model/types.js';
import type { Chain, Cidr, HookName, Negatable, Rule, Ruleset, Table, TableName } from '../../model/types.js';
import { HOOK_BY_INDEX } from '../state/constants.js';
import type { RuleCounter, TableEvaluator } from './iptables-evaluate.js';
import { TABLE_HOOKS, protocolNumber } from './iptables-lower.js';
import type { PacketState } from '../state/packet-state.js';
import type { ExtensionRegistry } from './registry.js';
import type { LowerEnvironment } from '../../iptables/extensions/types.js';
import { isAssumed, ruleComment } from './registry.js';
import { NF_ACCEPT, NF_DROP, XT_CONTINUE, applyTarget, extOpcode } from './targets.js';
import type { TargetHost } from './targets.js';
import type { TraceRecorder } from '../trace/events.js';

/** `(addr & mask) == net`, word by word. */
function inCidr(addr: readonly number[], c: Cidr): boolean {
  for (let i = 0; i < c.addr.length; i++) {
    if ((((addr[i] ?? 0) & c.mask[i]!) >>> 0) !== c.addr[i]! >>> 0) return false;
  }
  return true;
}

/** iptables' interface test: `eth0` exact, `eth+` a prefix, `+` anything. */
function ifaceMatches(pattern: string, name: string | null): boolean {
  if (pattern.endsWith('+')) {
    const stem = pattern.slice(0, -1);
    if (stem === '') return true;
    return name !== null && name.startsWith(stem);
  }
  return name === pattern;
}

function negatable<T>(n: Negatable<T> | undefined, test: (v: T) => boolean): boolean {
  if (n === undefined) return true;
  return test(n.value) !== n.negated;
}

/** The base IP match of a rule (`ip_packet_match`). */
export function referenceIpMatch(rule: Rule, p: PacketView): boolean {
  if (!negatable(rule.source, (c) => inCidr(p.src, c))) return false;
  if (!negatable(rule.destination, (c) => inCidr(p.dst, c))) return false;
  if (!negatable(rule.inInterface, (i) => ifaceMatches(i, p.inIface))) return false;
  if (!negatable(rule.outInterface, (i) => ifaceMatches(i, p.outIface))) return false;
  const proto = protocolNumber(rule.protocol);
  if (proto !== 0 && rule.protocol && (p.proto === proto) === rule.protocol.negated) return false;
  if (rule.fragment && p.fragment === rule.fragment.negated) return false;
  return true;
}

/** Runs rule sets by walking the model. @internal */
export class ReferenceInterpreter implements TableEvaluator {
  private readonly lowered = new WeakMap<object, (p: PacketView) => boolean>();
  /** Packet counters by rule object; policies by chain object. */
  private readonly ruleCount = new Map<Rule, number>();
  private readonly policyCount = new Map<Chain, number>();
  private readonly synthesized = new Map<string, Chain>();

  readonly ruleset: Ruleset;
  readonly registry: ExtensionRegistry;
  readonly env: LowerEnvironment;
  constructor(ruleset: Ruleset, registry: ExtensionRegistry, env: LowerEnvironment = {}) {
    this.env = env;
    this.ruleset = ruleset;
    this.registry = registry;
  }

  private table(index: number): Table | undefined {
    const name = TABLE_NAMES[index];
    return this.ruleset.tables.find((t) => t.name === name);
  }

  hasTable(table: number): boolean {
    return this.table(table) !== undefined;
  }

  counters(): RuleCounter[] {
    const out: RuleCounter[] = [];
    for (const t of this.ruleset.tables) {
      // The table's chains, then the built-in chains its dump left out (as lowering orders them).
      const missing = TABLE_HOOKS[t.name].filter((h) => !t.chains.some((c) => c.builtin && c.name === h));
      const chains = [...t.chains, ...missing.map((h) => this.missingBuiltin(t, h))];
      for (const c of chains) {
        c.rules.forEach((r, i) => {
          const n = this.ruleCount.get(r) ?? 0;
          if (n > 0) out.push({ table: t.name, chain: c.name, rule: i + 1, packets: n });
        });
        const n = this.policyCount.get(c) ?? 0;
        if (c.builtin && n > 0) out.push({ table: t.name, chain: c.name, rule: c.rules.length + 1, packets: n });
      }
    }
    return out;
  }

  /** A built-in chain a dump does not list: empty, policy ACCEPT (one object per table and hook). */
  private missingBuiltin(table: Table, hook: HookName): Chain {
    const key = `${table.name}:${hook}`;
    let c = this.synthesized.get(key);
    if (!c) {
      c = { name: hook, builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [] };
      this.synthesized.set(key, c);
    }
    return c;
  }

  private matchFn(m: Rule['matches'][number]): (p: PacketView) => boolean {
    let fn = this.lowered.get(m);
    if (!fn) {
      const ext = this.registry.matches.get(m.name);
      fn = ext ? ext.lower(m.options, this.ruleset.family, this.env) : () => false;
      this.lowered.set(m, fn);
    }
    return fn;
  }

  private ruleMatches(rule: Rule, p: PacketState, tr: TraceRecorder | null, where: { table: TableName; chain: string; rule: number }): boolean {
    if (!referenceIpMatch(rule, p)) return false;
    for (const m of rule.matches) {
      const ok = this.matchFn(m)(p);
      const ext = this.registry.matches.get(m.name);
      const assumption = ext?.assumption?.(m.options);
      if (tr !== null && ext && (isAssumed(ext) || assumption !== undefined)) {
        tr.push({ packet: tr.packet, label: tr.label, type: 'assumed', hook: p.hook, table: where.table, chain: where.chain, rule: where.rule, match: m.name, result: ok, assumption: assumption ?? null });
      }
      if (!ok) return false;
    }
    return true;
  }

  doTable(tableIndex: number, hookIndex: number, p: PacketState, host: TargetHost, tr: TraceRecorder | null): number {
    const table = this.table(tableIndex);
    const hook: HookName = HOOK_BY_INDEX[hookIndex]!;
    if (!table || !TABLE_HOOKS[table.name].includes(hook)) return NF_ACCEPT;
    const chainNamed = (name: string): Chain | undefined => table.chains.find((c) => c.name === name);
    const builtin: Chain = table.chains.find((c) => c.builtin && c.name === hook) ?? this.missingBuiltin(table, hook);
    // The built-in chain's policy decides: its end, a RETURN from it, or a RETURN with nothing to return to.
    const policy = (): number => {
      this.policyCount.set(builtin, (this.policyCount.get(builtin) ?? 0) + 1);
      const verdict = builtin.policy === 'DROP' ? 'DROP' : 'ACCEPT';
      if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook, table: table.name, chain: builtin.name, rule: builtin.rules.length + 1, policy: verdict });
      return verdict === 'DROP' ? NF_DROP : NF_ACCEPT;
    };
    // Return points pushed by -j: the chain and the rule to resume at.
    const jumpStack: { chain: Chain; next: number }[] = [];
    const stackSize = table.chains.filter((c) => !c.builtin).length;
    let chain = builtin;
    let next = 0;
    for (;;) {
      const rule = chain.rules[next];
      if (rule === undefined) {
        if (chain.builtin) return policy();
        if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'return', hook, table: table.name, chain: chain.name, rule: chain.rules.length + 1 });
        const back = jumpStack.pop();
        if (!back) return policy();
        chain = back.chain;
        next = back.next;
        continue;
      }
      const number = next + 1;
      if (!this.ruleMatches(rule, p, tr, { table: table.name, chain: chain.name, rule: number })) {
        next++;
        continue;
      }
      this.ruleCount.set(rule, (this.ruleCount.get(rule) ?? 0) + 1);
      const t = rule.target;
      if (tr !== null) tr.push({
        packet: tr.packet, label: tr.label, type: 'rule', hook, table: table.name, chain: chain.name, rule: number,
        target: t === null ? '' : t.kind === 'verdict' ? t.verdict : t.kind === 'extension' ? t.name : t.chain,
        action: t === null ? 'none' : t.kind,
        text: rule.text ?? null, comment: ruleComment(rule.matches), span: rule.span ?? null,
      });
      if (t === null) {
        next++;
        continue;
      }
      if (t.kind === 'verdict') {
        if (t.verdict === 'ACCEPT') return NF_ACCEPT;
        if (t.verdict === 'DROP') return NF_DROP;
        const back = jumpStack.pop();
        if (!back) return policy();
        chain = back.chain;
        next = back.next;
        continue;
      }
      if (t.kind === 'jump' || t.kind === 'goto') {
        const target = chainNamed(t.chain);
        if (!target) return NF_DROP;
        if (t.kind === 'jump') {
          if (jumpStack.length >= stackSize) {
            p.dropReason = 'jump stack overflow';
            return NF_DROP;
          }
          jumpStack.push({ chain, next: next + 1 });
        }
        chain = target;
        next = 0;
        continue;
      }
      const ext = this.registry.targets.get(t.name);
      const v = applyTarget(extOpcode(t.name, ext ? ext.terminal : true), t.options, p, host, tr, {
        hook, table: table.name, chain: chain.name, rule: number, name: t.name,
      });
      if (v === XT_CONTINUE) {
        next++;
        continue;
      }
      return v;
    }
  }
}
