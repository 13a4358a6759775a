/**
 * The nft parser: tokens → commands, for what `nft -f` reads in practice — the command form
 * (`add|create|insert|replace|delete|flush` of tables, chains, rules, sets, maps and elements)
 * and the block form `nft list ruleset` prints, with `define` variables, comments and line
 * continuations. A syntax error stops the parse and is reported at its token, as nft's bison
 * parser reports `FILE:LINE:COL: syntax error, unexpected …`.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../model/errors.js';
import type { Span } from '../../model/types.js';
import { BARE_META, META_KEYS, ctKeyType, payloadFields } from '../datatypes.js';
import type { NftChainType, NftFamily, NftHook, NftSelector } from '../model.js';
import type { RawChainSpec, RawCommand, RawElement, RawExpr, RawPosition, RawSetSpec, RawStatement } from './ast.js';
import { tokenizeNft, type NftToken } from './lexer.js';

/** The commands of a file, or the first syntax error. */
export interface NftParseOutput {
  readonly commands: readonly RawCommand[];
  readonly diagnostics: readonly Diagnostic[];
}

class SyntaxError_ extends Error {
  readonly diag: Diagnostic;
  constructor(diag: Diagnostic) {
    super(diag.message);
    this.diag = diag;
  }
}

const FAMILIES = new Set(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev']);
const CHAIN_TYPES = new Set(['filter', 'nat', 'route']);
const HOOKS = new Set(['prerouting', 'input', 'forward', 'output', 'postrouting', 'ingress', 'egress']);
const PAYLOAD_PROTOCOLS = new Set(['ip', 'ip6', 'tcp', 'udp', 'sctp', 'th', 'icmp', 'icmpv6']);
const RELOPS: Readonly<Record<string, '==' | '!=' | '<' | '>' | '<=' | '>='>> = {
  '==': '==', eq: '==', '!=': '!=', ne: '!=', '<': '<', lt: '<', '>': '>', gt: '>', '<=': '<=', le: '<=', '>=': '>=', ge: '>=',
};
const BINOPS: Readonly<Record<string, '&' | '|' | '^'>> = { '&': '&', and: '&', '|': '|', or: '|', '^': '^', xor: '^' };
/** nft keywords that are statements or selectors, never values. */
const UNSUPPORTED_STATEMENTS = new Set(['queue', 'dup', 'fwd', 'quota', 'synproxy', 'flow', 'meter', 'xt', 'secmark', 'osf', 'exthdr', 'rt', 'ipsec', 'vlan', 'ether', 'arp', 'dccp', 'udplite', 'ah', 'esp', 'comp', 'hbh', 'frag', 'dst', 'mh', 'srh', 'tcpopt', 'ct-helper', 'last']);

/** Keywords of nft's grammar that can never be a value (the scanner returns them as tokens). */
const RESERVED = new Set([
  'counter', 'accept', 'drop', 'return', 'continue', 'jump', 'goto', 'log', 'limit', 'reject', 'redirect', 'masquerade',
  'tproxy', 'notrack', 'meta', 'ct', 'iifname', 'oifname', 'iif', 'oif', 'skuid', 'skgid', 'mark', 'fib', 'socket',
  'numgen', 'comment', 'vmap', 'map', 'set', 'add', 'insert', 'delete', 'table', 'chain', 'rule', 'flush', 'define', 'queue',
  'pkttype', 'saddr', 'daddr', 'sport', 'dport', 'type', 'hook', 'priority', 'policy', 'elements', 'flags', 'to', 'with',
]);

function describe(t: NftToken): string {
  if (t.kind === 'eof') return 'end of file';
  if (t.kind === 'newline') return 'newline';
  if (t.kind === 'string') return `quoted string`;
  return t.text;
}

function join(a: Span, b: Span): Span {
  return { line: a.line, column: a.column, offset: a.offset, length: b.line === a.line ? b.offset + b.length - a.offset : a.length };
}

/** Parses nft input into commands. */
export function parseNftCommands(text: string): NftParseOutput {
  const lexed = tokenizeNft(text);
  if (lexed.diagnostics.length > 0) return { commands: [], diagnostics: lexed.diagnostics };
  const p = new Parser(lexed.tokens);
  try {
    p.file();
    return { commands: p.commands, diagnostics: [] };
  } catch (e) {
    if (e instanceof SyntaxError_) return { commands: p.commands, diagnostics: [e.diag] };
    throw e;
  }
}

class Parser {
  readonly commands: RawCommand[] = [];
  private i = 0;
  private readonly vars = new Map<string, RawExpr>();

  private readonly tokens: readonly NftToken[];

  constructor(tokens: readonly NftToken[]) {
    this.tokens = tokens;
  }

  // --- token helpers ----------------------------------------------------------------------

  private peek(k = 0): NftToken {
    return this.tokens[Math.min(this.i + k, this.tokens.length - 1)]!;
  }
  private next(): NftToken {
    const t = this.peek();
    if (this.i < this.tokens.length - 1) this.i++;
    return t;
  }
  private isWord(text?: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'word' && (text === undefined || t.text === text);
  }
  private isPunct(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'punct' && t.text === text;
  }
  private atEnd(): boolean {
    const t = this.peek();
    return t.kind === 'newline' || t.kind === 'eof' || (t.kind === 'punct' && (t.text === ';' || t.text === '}'));
  }
  private fail(t: NftToken, expecting?: string): never {
    const msg = `syntax error, unexpected ${describe(t)}${expecting ? `, expecting ${expecting}` : ''}`;
    throw new SyntaxError_(diagnostic('UNEXPECTED_TOKEN', msg, t.span, t.text));
  }
  private failAt(span: Span, message: string, token?: string, code: Diagnostic['code'] = 'UNEXPECTED_TOKEN'): never {
    throw new SyntaxError_(diagnostic(code, message, span, token));
  }
  private expectWord(text?: string): NftToken {
    const t = this.peek();
    if (t.kind !== 'word' || (text !== undefined && t.text !== text)) this.fail(t, text ?? 'string');
    return this.next();
  }
  private expectPunct(text: string): NftToken {
    const t = this.peek();
    if (t.kind !== 'punct' || t.text !== text) this.fail(t, `'${text}'`);
    return this.next();
  }
  /** An identifier: a word or a quoted string. */
  private identifier(what = 'string'): NftToken {
    const t = this.peek();
    if (t.kind === 'word' || t.kind === 'string') {
      if (t.kind === 'word' && t.text.startsWith('$')) {
        const v = this.vars.get(t.text.slice(1));
        if (!v) this.failAt(t.span, `unknown identifier '${t.text.slice(1)}'`, t.text, 'BAD_VALUE');
        if (v.t !== 'sym') this.failAt(t.span, `syntax error, unexpected variable, expecting ${what}`, t.text);
        this.next();
        return { kind: 'word', text: v.text, span: t.span };
      }
      return this.next();
    }
    return this.fail(t, what);
  }
  private skipNewlines(): void {
    while (this.peek().kind === 'newline') this.next();
  }
  private endStatement(): void {
    const t = this.peek();
    if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
      this.next();
      return;
    }
    if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) return;
    this.fail(t, 'newline or semicolon');
  }
  private number(what = 'number'): { value: number; span: Span } {
    const t = this.peek();
    if (t.kind !== 'word' || !/^(0x[0-9a-f]+|[0-9]+)$/i.test(t.text)) this.fail(t, what);
    this.next();
    return { value: Number(t.text), span: t.span };
  }

  // --- top level ----------------------------------------------------------------------------

  file(): void {
    for (;;) {
      this.skipNewlines();
      const t = this.peek();
      if (t.kind === 'eof') return;
      if (t.kind === 'punct' && t.text === ';') {
        this.next();
        continue;
      }
      this.command();
      this.endStatement();
    }
  }

  private family(): NftFamily {
    const t = this.peek();
    if (t.kind === 'word' && FAMILIES.has(t.text)) {
      this.next();
      if (t.text === 'ip' || t.text === 'ip6' || t.text === 'inet') return t.text;
      this.failAt(t.span, `family "${t.text}" is not supported (netfilter-sim reads ip, ip6 and inet tables)`, t.text, 'UNSUPPORTED');
    }
    return 'ip';
  }

  private command(): void {
    const t = this.peek();
    if (t.kind !== 'word') this.fail(t);
    switch (t.text) {
      case 'define': return this.define();
      case 'include': return this.failAt(t.span, 'include is not supported: give each file with --rules', t.text, 'UNSUPPORTED');
      case 'table': case 'chain': case 'set': case 'map': case 'element': case 'rule':
        return this.addCommand('add');
      case 'add': case 'create':
        this.next();
        return this.addCommand(t.text);
      case 'insert': case 'replace':
        this.next();
        if (!this.isWord('rule')) this.fail(this.peek(), 'rule');
        this.next();
        return this.ruleCommand(t.text, t.span);
      case 'delete': case 'destroy':
        this.next();
        return this.deleteCommand(t.span);
      case 'flush':
        this.next();
        return this.flushCommand(t.span);
      case 'list': case 'reset': case 'rename': case 'export': case 'monitor': case 'describe': case 'import':
        return this.failAt(t.span, `"${t.text}" commands are not supported in rule files`, t.text, 'UNSUPPORTED');
      default:
        return this.fail(t);
    }
  }

  private define(): void {
    this.next();
    const name = this.expectWord();
    if (this.vars.has(name.text)) this.failAt(name.span, `redefinition of symbol '${name.text}'`, name.text, 'BAD_VALUE');
    this.expectPunct('=');
    const value = this.rhs(true);
    this.vars.set(name.text, value);
  }

  private addCommand(op: 'add' | 'create'): void {
    const kw = this.expectWord();
    switch (kw.text) {
      case 'table': {
        const family = this.family();
        const name = this.identifier('string');
        const at = this.commands.length;
        this.commands.push({ c: 'table', op, family, table: name.text, span: kw.span });
        if (this.isPunct('{')) {
          const comment = this.tableBlock(family, name.text);
          if (comment !== undefined) this.commands[at] = { c: 'table', op, family, table: name.text, span: kw.span, comment };
        }
        return;
      }
      case 'chain': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        if (this.isPunct('{')) {
          this.next();
          const { spec, rules } = this.chainBody(family, table.text, name.text, true);
          this.expectPunct('}');
          this.commands.push({ c: 'chain', op, family, table: table.text, chain: name.text, spec, span: kw.span, nameSpan: name.span });
          this.commands.push(...rules);
          return;
        }
        this.commands.push({ c: 'chain', op, family, table: table.text, chain: name.text, span: kw.span, nameSpan: name.span });
        return;
      }
      case 'rule': return this.ruleCommand('add', kw.span);
      case 'set': case 'map': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.expectPunct('{');
        const spec = this.setBody(kw.text === 'map');
        this.expectPunct('}');
        this.commands.push({ c: 'set', op, map: kw.text === 'map', family, table: table.text, name: name.text, spec, span: kw.span, nameSpan: name.span });
        return;
      }
      case 'element': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        const elements = this.setExpr();
        this.commands.push({ c: 'element', op: 'add', family, table: table.text, name: name.text, elements, span: kw.span, nameSpan: name.span });
        return;
      }
      default:
        // `add [rule] FAMILY TABLE CHAIN …`: the rule keyword may be left out.
        this.i--;
        return this.ruleCommand('add', kw.span);
    }
  }

  private ruleCommand(op: 'add' | 'insert' | 'replace', span: Span): void {
    const family = this.family();
    const table = this.identifier();
    const chain = this.identifier();
    let position: RawPosition | undefined;
    if (this.isWord('handle') || this.isWord('index') || this.isWord('position')) {
      const k = this.next();
      const n = this.number();
      position = { kind: k.text as RawPosition['kind'], value: n.value, span: join(k.span, n.span) };
    }
    if (op === 'replace' && position?.kind !== 'handle') this.fail(this.peek(), 'handle');
    const statements = this.ruleStatements();
    if (statements.length === 0) this.fail(this.peek());
    this.commands.push({ c: 'rule', op, family, table: table.text, chain: chain.text, ...(position ? { position } : {}), statements, span, chainSpan: chain.span });
  }

  private deleteCommand(span: Span): void {
    const kw = this.expectWord();
    switch (kw.text) {
      case 'table': {
        const family = this.family();
        const name = this.identifier();
        this.commands.push({ c: 'table', op: 'delete', family, table: name.text, span });
        return;
      }
      case 'chain': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.commands.push({ c: 'chain', op: 'delete', family, table: table.text, chain: name.text, span, nameSpan: name.span });
        return;
      }
      case 'rule': {
        const family = this.family();
        const table = this.identifier();
        const chain = this.identifier();
        const h = this.expectWord('handle');
        const n = this.number();
        this.commands.push({ c: 'rule', op: 'delete', family, table: table.text, chain: chain.text, position: { kind: 'handle', value: n.value, span: join(h.span, n.span) }, statements: [], span, chainSpan: chain.span });
        return;
      }
      case 'set': case 'map': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.commands.push({ c: 'set', op: 'delete', map: kw.text === 'map', family, table: table.text, name: name.text, span, nameSpan: name.span });
        return;
      }
      case 'element': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        const elements = this.setExpr();
        this.commands.push({ c: 'element', op: 'delete', family, table: table.text, name: name.text, elements, span, nameSpan: name.span });
        return;
      }
      default:
        return this.fail(kw);
    }
  }

  private flushCommand(span: Span): void {
    const kw = this.expectWord();
    switch (kw.text) {
      case 'ruleset':
        if (this.isWord() && FAMILIES.has(this.peek().text)) this.failAt(this.peek().span, 'flush ruleset FAMILY is not supported', this.peek().text, 'UNSUPPORTED');
        this.commands.push({ c: 'ruleset', op: 'flush', span });
        return;
      case 'table': {
        const family = this.family();
        const name = this.identifier();
        this.commands.push({ c: 'table', op: 'flush', family, table: name.text, span });
        return;
      }
      case 'chain': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.commands.push({ c: 'chain', op: 'flush', family, table: table.text, chain: name.text, span, nameSpan: name.span });
        return;
      }
      case 'set': case 'map': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.commands.push({ c: 'set', op: 'flush', map: kw.text === 'map', family, table: table.text, name: name.text, span, nameSpan: name.span });
        return;
      }
      default:
        return this.fail(kw);
    }
  }

  // --- blocks -------------------------------------------------------------------------------

  /** A table's block; returns its comment, if it has one. */
  private tableBlock(family: NftFamily, table: string): string | undefined {
    this.expectPunct('{');
    let comment: string | undefined;
    const sets: RawCommand[] = [];
    const chains: RawCommand[] = [];
    const rules: RawCommand[] = [];
    for (;;) {
      this.skipNewlines();
      const t = this.peek();
      if (t.kind === 'punct' && t.text === '}') {
        this.next();
        break;
      }
      if (t.kind === 'punct' && t.text === ';') {
        this.next();
        continue;
      }
      if (t.kind !== 'word') this.fail(t);
      switch (t.text) {
        case 'chain': {
          this.next();
          const name = this.identifier();
          this.expectPunct('{');
          const body = this.chainBody(family, table, name.text, false);
          this.expectPunct('}');
          chains.push({ c: 'chain', op: 'add', family, table, chain: name.text, spec: body.spec, span: t.span, nameSpan: name.span });
          rules.push(...body.rules);
          break;
        }
        case 'set': case 'map': {
          this.next();
          const name = this.identifier();
          this.expectPunct('{');
          const spec = this.setBody(t.text === 'map');
          this.expectPunct('}');
          sets.push({ c: 'set', op: 'add', map: t.text === 'map', family, table, name: name.text, spec, span: t.span, nameSpan: name.span });
          break;
        }
        case 'comment':
          this.next();
          comment = this.identifier().text;
          break;
        case 'flags': {
          this.next();
          const f = this.expectWord();
          if (f.text !== 'dormant') this.fail(f);
          this.failAt(f.span, 'dormant tables are not supported', f.text, 'UNSUPPORTED');
          break;
        }
        default:
          this.fail(t);
      }
      this.endStatement();
    }
    // nft declares a block's sets and chains before its rules, so rules may jump forward.
    this.commands.push(...sets, ...chains, ...rules);
    return comment;
  }

  private chainBody(family: NftFamily, table: string, chain: string, inAddCommand: boolean): { spec: RawChainSpec; rules: RawCommand[] } {
    let spec: { -readonly [K in keyof RawChainSpec]: RawChainSpec[K] } = {};
    const rules: RawCommand[] = [];
    void inAddCommand;
    for (;;) {
      this.skipNewlines();
      const t = this.peek();
      if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) break;
      if (t.kind === 'punct' && t.text === ';') {
        this.next();
        continue;
      }
      if (t.kind === 'word' && t.text === 'type' && this.peek(1).kind === 'word' && CHAIN_TYPES.has(this.peek(1).text)) {
        this.next();
        const type = this.next();
        const hookKw = this.expectWord('hook');
        const hook = this.expectWord();
        if (!HOOKS.has(hook.text)) this.fail(hook, 'hook name');
        if (hook.text === 'ingress' || hook.text === 'egress') this.failAt(hook.span, `hook "${hook.text}" is not supported`, hook.text, 'UNSUPPORTED');
        if (this.isWord('device')) this.failAt(this.peek().span, 'devices on base chains are not supported', 'device', 'UNSUPPORTED');
        this.expectWord('priority');
        const priority = this.priority();
        spec = { ...spec, type: { type: type.text as NftChainType, hook: hook.text as NftHook, priority, span: t.span, hookSpan: hook.span, typeSpan: type.span } };
        void hookKw;
        this.endStatement();
        continue;
      }
      if (t.kind === 'word' && t.text === 'policy') {
        this.next();
        const p = this.identifier('policy');
        spec = { ...spec, policy: { policy: p.text, span: p.span } };
        this.endStatement();
        continue;
      }
      if (t.kind === 'word' && t.text === 'comment' && this.peek(1).kind === 'string') {
        this.next();
        spec = { ...spec, comment: this.next().text };
        this.endStatement();
        continue;
      }
      const start = t.span;
      const statements = this.ruleStatements();
      rules.push({ c: 'rule', op: 'add', family, table, chain, statements, span: start, chainSpan: start });
      this.endStatement();
    }
    return { spec, rules };
  }

  private priority(): RawExpr {
    const t = this.peek();
    if (t.kind === 'word' && t.text.startsWith('$')) return this.variable(this.next());
    if (t.kind === 'word' && /^[a-z]+$/.test(t.text)) {
      this.next();
      if (this.isWord('+') || this.isWord('-')) {
        const sign = this.next();
        const n = this.number();
        return { t: 'sym', text: `${t.text} ${sign.text} ${n.value}`, quoted: false, span: join(t.span, n.span) };
      }
      return { t: 'sym', text: t.text, quoted: false, span: t.span };
    }
    if (t.kind === 'word' && /^-?[0-9]+$/.test(t.text)) {
      this.next();
      return { t: 'sym', text: t.text, quoted: false, span: t.span };
    }
    if (t.kind === 'word' && (t.text === '-' || t.text === '+') && this.peek(1).kind === 'word' && /^[0-9]+$/.test(this.peek(1).text)) {
      this.next();
      const n = this.next();
      return { t: 'sym', text: `${t.text === '-' ? '-' : ''}${n.text}`, quoted: false, span: join(t.span, n.span) };
    }
    return this.fail(t, 'number or priority name');
  }

  private setBody(map: boolean): RawSetSpec {
    const flags: { flag: string; span: Span }[] = [];
    let spec: { -readonly [K in keyof RawSetSpec]: RawSetSpec[K] } = { flags };
    for (;;) {
      this.skipNewlines();
      const t = this.peek();
      if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) break;
      if (t.kind === 'punct' && t.text === ';') {
        this.next();
        continue;
      }
      if (t.kind !== 'word') this.fail(t);
      this.next();
      switch (t.text) {
        case 'type': {
          const types = [this.expectWord().text];
          let end = this.peek(-1).span;
          while (this.isWord('.')) {
            this.next();
            const w = this.expectWord();
            types.push(w.text);
            end = w.span;
          }
          spec = { ...spec, key: { types, span: join(t.span, end) } };
          if (map) {
            this.expectWord(':');
            const d = this.expectWord();
            spec = { ...spec, data: { type: d.text, span: d.span } };
          }
          break;
        }
        case 'typeof':
          this.failAt(t.span, 'typeof set declarations are not supported; write the key type (type ipv4_addr …)', t.text, 'UNSUPPORTED');
          break;
        case 'flags':
          for (;;) {
            const f = this.expectWord();
            flags.push({ flag: f.text, span: f.span });
            if (!this.isPunct(',')) break;
            this.next();
          }
          break;
        case 'elements':
          this.expectPunct('=');
          spec = { ...spec, elements: this.setExpr() };
          break;
        case 'size':
          spec = { ...spec, size: this.number().value };
          break;
        case 'timeout': {
          const w = this.expectWord();
          const ms = parseTime(w.text);
          if (ms === null) this.failAt(w.span, `wrong time format: ${w.text}`, w.text, 'BAD_VALUE');
          spec = { ...spec, timeout: ms };
          break;
        }
        case 'comment':
          spec = { ...spec, comment: this.identifier().text };
          break;
        case 'policy':
          this.expectWord();
          break;
        case 'auto-merge':
          break;
        default:
          this.fail(t);
      }
      this.endStatement();
    }
    return spec;
  }

  // --- rules ----------------------------------------------------------------------------

  private ruleStatements(): RawStatement[] {
    const out: RawStatement[] = [];
    while (!this.atEnd()) out.push(this.statement());
    return out;
  }

  private statement(): RawStatement {
    const t = this.peek();
    if (t.kind !== 'word') {
      if (t.kind === 'punct' && t.text === '{') this.fail(t);
      this.fail(t);
    }
    switch (t.text) {
      case 'accept': case 'drop': case 'return': case 'continue':
        this.next();
        return { t: 'verdict', verdict: t.text, span: t.span };
      case 'jump': case 'goto': {
        this.next();
        const c = this.identifier('chain name');
        return { t: 'verdict', verdict: t.text, chain: c.text, span: join(t.span, c.span), chainSpan: c.span };
      }
      case 'counter': {
        this.next();
        let packets = 0;
        let bytes = 0;
        if (this.isWord('packets')) {
          this.next();
          packets = this.number().value;
          this.expectWord('bytes');
          bytes = this.number().value;
        }
        return { t: 'counter', packets, bytes, span: t.span };
      }
      case 'log': return this.logStatement();
      case 'limit': return this.limitStatement();
      case 'reject': return this.rejectStatement();
      case 'redirect': case 'masquerade': case 'dnat': case 'snat': return this.natStatement();
      case 'tproxy': return this.tproxyStatement();
      case 'notrack':
        this.next();
        return { t: 'notrack', span: t.span };
      case 'update': case 'add': {
        // `update @set { key }`, `add @set { key }`: the dynamic set statements.
        const n = this.peek(1);
        if (n.kind !== 'word' || !n.text.startsWith('@')) return this.fail(n);
        this.next();
        this.next();
        this.expectPunct('{');
        const key = this.lhs();
        const close = this.expectPunct('}');
        return { t: 'setupdate', op: t.text, set: n.text.slice(1), setSpan: n.span, key, span: join(t.span, close.span) };
      }
      case 'comment': {
        this.next();
        const s = this.identifier();
        return { t: 'comment', text: s.text, span: s.span };
      }
      default:
        if (UNSUPPORTED_STATEMENTS.has(t.text)) this.failAt(t.span, `"${t.text}" is not supported by netfilter-sim`, t.text, 'UNSUPPORTED');
        return this.matchOrMangle();
    }
  }

  private logStatement(): RawStatement {
    const start = this.next();
    const s: { prefix?: string; level?: string; group?: number; snaplen?: number; queueThreshold?: number; flags?: string[] } = {};
    for (;;) {
      if (this.isWord('prefix')) {
        this.next();
        s.prefix = this.identifier().text;
      } else if (this.isWord('level')) {
        this.next();
        const l = this.expectWord();
        if (!['emerg', 'alert', 'crit', 'err', 'warn', 'notice', 'info', 'debug', 'audit'].includes(l.text)) this.failAt(l.span, `${l.text}: Unknown log level`, l.text, 'BAD_VALUE');
        s.level = l.text;
      } else if (this.isWord('group')) {
        this.next();
        s.group = this.number().value;
      } else if (this.isWord('snaplen')) {
        this.next();
        s.snaplen = this.number().value;
      } else if (this.isWord('queue-threshold')) {
        this.next();
        s.queueThreshold = this.number().value;
      } else if (this.isWord('flags')) {
        this.next();
        const flags: string[] = [];
        for (;;) {
          const f = this.expectWord();
          flags.push(f.text);
          if (f.text === 'tcp' || f.text === 'ip') {
            const g = this.expectWord();
            flags[flags.length - 1] += ` ${g.text}`;
          }
          if (!this.isPunct(',')) break;
          this.next();
        }
        s.flags = flags;
      } else break;
    }
    return { t: 'log', ...s, span: start.span };
  }

  private limitStatement(): RawStatement {
    const start = this.next();
    this.expectWord('rate');
    let over = false;
    if (this.isWord('over')) {
      this.next();
      over = true;
    } else if (this.isWord('until')) this.next();
    const r = this.expectWord();
    const m = /^([0-9]+)\/(second|minute|hour|day|week)$/.exec(r.text);
    let rate: number;
    let unit: string;
    if (m) {
      rate = Number(m[1]);
      unit = m[2]!;
    } else if (/^[0-9]+$/.test(r.text) && this.isWord('/')) {
      rate = Number(r.text);
      this.next();
      unit = this.expectWord().text;
      if (!['second', 'minute', 'hour', 'day', 'week'].includes(unit)) this.fail(this.peek(-1));
    } else if (/^[0-9]+$/.test(r.text) && this.isWord() && /^(bytes|kbytes|mbytes)\//.test(this.peek().text)) {
      return this.failAt(this.peek().span, 'byte-rate limits are not supported', this.peek().text, 'UNSUPPORTED');
    } else {
      return this.fail(r);
    }
    let burst: number | undefined;
    if (this.isWord('burst')) {
      this.next();
      burst = this.number().value;
      this.expectWord('packets');
    }
    return { t: 'limit', rate, unit: unit as 'second', over, ...(burst !== undefined ? { burst } : {}), span: start.span };
  }

  private rejectStatement(): RawStatement {
    const start = this.next();
    if (!this.isWord('with')) return { t: 'reject', span: start.span };
    this.next();
    const kind = this.expectWord();
    if (kind.text === 'tcp') {
      this.expectWord('reset');
      return { t: 'reject', with: { type: 'tcp-reset' }, span: start.span };
    }
    if (kind.text !== 'icmp' && kind.text !== 'icmpv6' && kind.text !== 'icmpx') this.fail(kind);
    if (this.isWord('type')) this.next();
    const code = this.expectWord();
    return { t: 'reject', with: { type: kind.text, code: { t: 'sym', text: code.text, quoted: false, span: code.span } }, span: start.span };
  }

  private natFlags(): string[] {
    const flags: string[] = [];
    while (this.isWord('random') || this.isWord('fully-random') || this.isWord('persistent')) {
      flags.push(this.next().text);
      if (this.isPunct(',')) this.next();
    }
    return flags;
  }

  /** `ADDR`, `ADDR:PORT`, `[ADDR6]:PORT`, `:PORT`, ranges of either; `$var` in either place. */
  private addressPort(word: NftToken): { addr?: RawExpr; port?: RawExpr } {
    const parts = this.addressPortParts(word);
    const resolve = (e: RawExpr | undefined): RawExpr | undefined => (e && e.t === 'sym' && e.text.startsWith('$') ? { ...this.variable({ kind: 'word', text: e.text, span: e.span }), span: e.span } : e);
    const addr = resolve(parts.addr);
    const port = resolve(parts.port);
    return { ...(addr ? { addr } : {}), ...(port ? { port } : {}) };
  }

  private addressPortParts(word: NftToken): { addr?: RawExpr; port?: RawExpr } {
    const text = word.text;
    const at = (offset: number, len: number): Span => ({ ...word.span, column: word.span.column + offset, offset: word.span.offset + offset, length: Math.max(1, len) });
    const sym = (s: string, offset: number): RawExpr => ({ t: 'sym', text: s, quoted: false, span: at(offset, s.length) });
    if (text.startsWith(':') && !text.startsWith('::')) return { port: sym(text.slice(1), 1) };
    if (text.startsWith('[')) {
      const close = text.indexOf(']');
      if (close < 0) this.fail(word);
      const addr = text.slice(1, close);
      const rest = text.slice(close + 1);
      if (rest === '') return { addr: sym(addr, 1) };
      if (!rest.startsWith(':')) this.fail(word);
      return { addr: sym(addr, 1), port: sym(rest.slice(1), close + 2) };
    }
    if (/^[0-9]+\.[0-9.\-]*:/.test(text)) {
      const c = text.indexOf(':');
      return { addr: sym(text.slice(0, c), 0), port: sym(text.slice(c + 1), c + 1) };
    }
    return { addr: sym(text, 0) };
  }

  private natStatement(): RawStatement {
    const start = this.next();
    const type = start.text as 'snat' | 'dnat' | 'masquerade' | 'redirect';
    let family: 'ip' | 'ip6' | undefined;
    if ((type === 'snat' || type === 'dnat') && (this.isWord('ip') || this.isWord('ip6')) && this.isWord('to', 1)) family = this.next().text as 'ip' | 'ip6';
    let addr: RawExpr | undefined;
    let port: RawExpr | undefined;
    if (this.isWord('to')) {
      this.next();
      const t = this.peek();
      if (t.kind === 'word' && this.selectorStart()) {
        const key = this.lhs();
        this.expectWord('map');
        const mappings = this.rhs(false);
        addr = { t: 'map', key, mappings, span: join(t.span, mappings.span) };
      } else if (t.kind === 'word' && t.text.startsWith('$')) {
        const v = this.variable(this.next());
        if (v.t === 'sym') ({ addr, port } = this.addressPort({ kind: 'word', text: v.text, span: v.span }));
        else addr = v;
      } else {
        const w = this.expectWord();
        ({ addr, port } = this.addressPort(w));
        if (addr && (type === 'redirect' || type === 'masquerade')) this.fail(w);
        if (!addr && (type === 'snat' || type === 'dnat') && !family) {
          // `dnat to :80` keeps the address: nft needs one.
          this.fail(w);
        }
      }
    } else if (type === 'snat' || type === 'dnat') {
      this.fail(this.peek(), 'to');
    }
    const flags = this.natFlags();
    return { t: 'nat', type, ...(family ? { family } : {}), ...(addr ? { addr } : {}), ...(port ? { port } : {}), flags, span: start.span };
  }

  private tproxyStatement(): RawStatement {
    const start = this.next();
    let family: 'ip' | 'ip6' | undefined;
    if (this.isWord('ip') || this.isWord('ip6')) family = this.next().text as 'ip' | 'ip6';
    this.expectWord('to');
    const w = this.expectWord();
    const { addr, port } = this.addressPort(w);
    return { t: 'tproxy', ...(family ? { family } : {}), ...(addr ? { addr } : {}), ...(port ? { port } : {}), span: start.span };
  }

  // --- expressions ------------------------------------------------------------------------

  private selectorStart(k = 0): boolean {
    const t = this.peek(k);
    if (t.kind !== 'word') return false;
    if (PAYLOAD_PROTOCOLS.has(t.text)) {
      const n = this.peek(k + 1);
      return n.kind === 'word' && payloadFields(t.text)?.[n.text] !== undefined;
    }
    return ['meta', 'ct', 'fib', 'socket', 'numgen'].includes(t.text) || (BARE_META.has(t.text) && META_KEYS[t.text] !== undefined);
  }

  private selector(): { sel: NftSelector; span: Span } {
    const t = this.next();
    const done = (sel: NftSelector): { sel: NftSelector; span: Span } => ({ sel, span: join(t.span, this.peek(-1).span) });
    if (PAYLOAD_PROTOCOLS.has(t.text)) {
      const f = this.peek();
      if (f.kind !== 'word' || !payloadFields(t.text)?.[f.text]) {
        if (f.kind === 'word' && /^[a-z-]+$/.test(f.text)) this.failAt(f.span, `${t.text} ${f.text}: this header field is not supported`, f.text, 'UNSUPPORTED');
        this.fail(f);
      }
      this.next();
      return done({ kind: 'payload', protocol: t.text as 'ip', field: f.text });
    }
    switch (t.text) {
      case 'meta': {
        const k = this.expectWord();
        if (!META_KEYS[k.text]) this.failAt(k.span, `meta ${k.text}: this key is not supported`, k.text, 'UNSUPPORTED');
        return done({ kind: 'meta', key: k.text });
      }
      case 'ct': {
        let direction: 'original' | 'reply' | undefined;
        let family: 'ip' | 'ip6' | undefined;
        if (this.isWord('original') || this.isWord('reply')) direction = this.next().text as 'original';
        if (this.isWord('ip') || this.isWord('ip6')) family = this.next().text as 'ip';
        const k = this.expectWord();
        const addr = k.text === 'saddr' || k.text === 'daddr';
        if (!addr && !ctKeyType(k.text)) this.failAt(k.span, `ct ${k.text}: this key is not supported`, k.text, 'UNSUPPORTED');
        if (addr && !direction) this.failAt(k.span, `syntax error, unexpected ${k.text}`, k.text);
        if (!addr && family) this.fail(k);
        return done({ kind: 'ct', key: k.text, ...(direction ? { direction } : {}), ...(family ? { family } : {}) });
      }
      case 'fib': {
        const flags: ('saddr' | 'daddr' | 'mark' | 'iif' | 'oif')[] = [];
        for (;;) {
          const f = this.expectWord();
          if (!['saddr', 'daddr', 'mark', 'iif', 'oif'].includes(f.text)) this.fail(f, 'saddr or daddr');
          flags.push(f.text as 'saddr');
          if (!this.isWord('.')) break;
          this.next();
        }
        const r = this.expectWord();
        if (r.text !== 'type' && r.text !== 'oif' && r.text !== 'oifname') this.fail(r, 'type, oif or oifname');
        return done({ kind: 'fib', flags, result: r.text });
      }
      case 'socket': {
        const k = this.expectWord();
        if (k.text !== 'transparent' && k.text !== 'mark' && k.text !== 'wildcard') this.fail(k);
        return done({ kind: 'socket', key: k.text });
      }
      case 'numgen': {
        const m = this.expectWord();
        if (m.text !== 'inc' && m.text !== 'random') this.fail(m, 'inc or random');
        this.expectWord('mod');
        const mod = this.number();
        let offset = 0;
        if (this.isWord('offset')) {
          this.next();
          offset = this.number().value;
        }
        return done({ kind: 'numgen', mode: m.text, modulus: mod.value, offset });
      }
      default:
        if (BARE_META.has(t.text) && META_KEYS[t.text]) return done({ kind: 'meta', key: t.text });
        return this.fail(t);
    }
  }

  /** A left-hand side: selector, bitwise operations on constants, concatenations. */
  private lhs(): RawExpr {
    const items: RawExpr[] = [this.lhsItem()];
    while (this.isWord('.')) {
      this.next();
      items.push(this.lhsItem());
    }
    if (items.length === 1) return items[0]!;
    return { t: 'concat', items, span: join(items[0]!.span, items[items.length - 1]!.span) };
  }

  private lhsItem(): RawExpr {
    const first = this.peek();
    if (!this.selectorStart()) this.fail(first);
    const s = this.selector();
    let e: RawExpr = { t: 'sel', sel: s.sel, span: s.span };
    for (;;) {
      const t = this.peek();
      const op = (t.kind === 'punct' || t.kind === 'word') ? BINOPS[t.text] : undefined;
      if (!op) break;
      this.next();
      const r = this.primaryValue();
      e = { t: 'binop', op, left: e, right: r, span: join(e.span, r.span) };
    }
    return e;
  }

  /** A constant operand: a symbol, a variable, or a parenthesised bitwise expression of flags. */
  private primaryValue(): RawExpr {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === '(') {
      this.next();
      let e = this.primaryValue();
      for (;;) {
        const o = this.peek();
        const op = (o.kind === 'punct' || o.kind === 'word') ? BINOPS[o.text] : undefined;
        if (!op) break;
        this.next();
        const r = this.primaryValue();
        e = { t: 'binop', op, left: e, right: r, span: join(e.span, r.span) };
      }
      this.expectPunct(')');
      return e;
    }
    if (t.kind === 'word' && t.text.startsWith('$')) return this.variable(this.next());
    if (t.kind === 'word' && t.text.startsWith('@')) {
      this.next();
      return { t: 'setref', name: t.text.slice(1), span: t.span };
    }
    if (t.kind === 'word' || t.kind === 'string') {
      if (t.kind === 'word' && (t.text === '.' || t.text === ':' || t.text === '/' || t.text === '-' || RESERVED.has(t.text))) this.fail(t);
      this.next();
      return { t: 'sym', text: t.text, quoted: t.kind === 'string', span: t.span };
    }
    return this.fail(t);
  }

  private variable(t: NftToken): RawExpr {
    const v = this.vars.get(t.text.slice(1));
    if (!v) this.failAt(t.span, `unknown identifier '${t.text.slice(1)}'`, t.text, 'BAD_VALUE');
    return v;
  }

  /** A right-hand side: a value, a flag list, a concatenation, a set or a set reference. */
  private rhs(inDefine: boolean): RawExpr {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === '{') return this.setExpr();
    if (this.atEnd()) this.fail(t);
    const items: RawExpr[] = [this.rhsList(inDefine)];
    while (this.isWord('.')) {
      this.next();
      items.push(this.rhsList(inDefine));
    }
    if (items.length === 1) return items[0]!;
    return { t: 'concat', items, span: join(items[0]!.span, items[items.length - 1]!.span) };
  }

  private rhsList(inDefine: boolean): RawExpr {
    let first = this.primaryValue();
    for (;;) {
      const o = this.peek();
      const op = o.kind === 'punct' && (o.text === '|' || o.text === '&' || o.text === '^') ? BINOPS[o.text] : undefined;
      if (!op) break;
      this.next();
      const r = this.primaryValue();
      first = { t: 'binop', op, left: first, right: r, span: join(first.span, r.span) };
    }
    if (!this.isPunct(',')) return first;
    const items = [first];
    while (this.isPunct(',')) {
      this.next();
      if (inDefine && this.peek().kind === 'newline') break;
      items.push(this.primaryValue());
    }
    return { t: 'list', items, span: join(first.span, items[items.length - 1]!.span) };
  }

  /** `{ elem, elem : data, … }` with newlines allowed inside. */
  private setExpr(): RawExpr {
    const open = this.expectPunct('{');
    const elements: RawElement[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.isPunct('}')) break;
      const key = this.setKey();
      let data: RawExpr | undefined;
      let counter: { packets: number; bytes: number } | undefined;
      if (this.isWord('counter')) {
        this.next();
        counter = { packets: 0, bytes: 0 };
        if (this.isWord('packets')) {
          this.next();
          counter.packets = this.number().value;
          this.expectWord('bytes');
          counter.bytes = this.number().value;
        }
      }
      let comment: string | undefined;
      if (this.isWord('comment') && this.peek(1).kind === 'string') {
        this.next();
        comment = this.next().text;
      }
      this.skipNewlines();
      if (this.isWord(':')) {
        this.next();
        data = this.setData();
      }
      elements.push({ key, ...(data ? { data } : {}), ...(counter ? { counter } : {}), ...(comment !== undefined ? { comment } : {}), span: key.span });
      this.skipNewlines();
      if (this.isPunct(',')) {
        this.next();
        continue;
      }
      if (!this.isPunct('}')) this.fail(this.peek(), "comma or '}'");
    }
    const close = this.expectPunct('}');
    if (elements.length === 0 && this.peek(-2).kind === 'punct') {
      // `{ }` is an empty set; nft refuses it where a value is needed (evaluation says so).
    }
    return { t: 'set', elements, span: join(open.span, close.span) };
  }

  private setKey(): RawExpr {
    const t = this.peek();
    if (t.kind === 'word' && t.text.startsWith('$')) {
      const v = this.variable(this.next());
      return v;
    }
    const items: RawExpr[] = [this.primaryValue()];
    while (this.isWord('.')) {
      this.next();
      items.push(this.primaryValue());
    }
    if (items.length === 1) return items[0]!;
    return { t: 'concat', items, span: join(items[0]!.span, items[items.length - 1]!.span) };
  }

  private setData(): RawExpr {
    const t = this.peek();
    if (t.kind === 'word' && ['accept', 'drop', 'return', 'continue', 'jump', 'goto'].includes(t.text)) {
      this.next();
      if (t.text === 'jump' || t.text === 'goto') {
        const c = this.identifier('chain name');
        return { t: 'verdict', verdict: t.text, chain: c.text, span: join(t.span, c.span) };
      }
      return { t: 'verdict', verdict: t.text as 'accept', span: t.span };
    }
    return this.setKey();
  }

  private matchOrMangle(): RawStatement {
    const start = this.peek();
    if (!this.selectorStart()) {
      if (start.kind === 'word' && PAYLOAD_PROTOCOLS.has(start.text)) {
        const f = this.peek(1);
        if (f.kind === 'word' && /^[a-z][a-z0-9-]*$/.test(f.text)) this.failAt(f.span, `${start.text} ${f.text}: this header field is not supported`, f.text, 'UNSUPPORTED');
        this.fail(f);
      }
      this.fail(start);
    }
    const left = this.lhs();
    if (this.isWord('set')) {
      this.next();
      const value = this.mangleValue();
      return { t: 'mangle', target: left, value, span: join(left.span, value.span) };
    }
    if (this.isWord('vmap')) {
      this.next();
      const mappings = this.rhs(false);
      return { t: 'vmap', key: left, mappings, span: join(left.span, mappings.span) };
    }
    let op: 'implicit' | '==' | '!=' | '<' | '>' | '<=' | '>=' = 'implicit';
    const o = this.peek();
    if ((o.kind === 'punct' || o.kind === 'word') && RELOPS[o.text]) {
      this.next();
      op = RELOPS[o.text]!;
    }
    if (this.atEnd()) this.fail(this.peek());
    const right = this.rhs(false);
    if (this.isWord('/') && op === 'implicit') {
      this.next();
      const mask = this.rhsList(false);
      return { t: 'match', left, op, right, flagMask: mask, span: join(left.span, mask.span) };
    }
    return { t: 'match', left, op, right, span: join(left.span, right.span) };
  }

  private mangleValue(): RawExpr {
    if (this.selectorStart()) {
      const key = this.lhs();
      if (this.isWord('map')) {
        this.next();
        const mappings = this.rhs(false);
        return { t: 'map', key, mappings, span: join(key.span, mappings.span) };
      }
      return key;
    }
    let v = this.primaryValue();
    for (;;) {
      const o = this.peek();
      const op = (o.kind === 'punct' || o.kind === 'word') ? BINOPS[o.text] : undefined;
      if (!op) break;
      this.next();
      const r = this.primaryValue();
      v = { t: 'binop', op, left: v, right: r, span: join(v.span, r.span) };
    }
    return v;
  }
}

/**
 * nft's time strings (`time_parse`): a sequence of number-unit pairs, units d, h, m, s, ms, e.g.
 * `3h`, `1d2h`, `10800s`; a bare number is seconds. Milliseconds, or null when malformed.
 */
export function parseTime(text: string): number | null {
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const re = /([0-9]+)(ms|d|h|m|s)/y;
  let ms = 0;
  let i = 0;
  while (i < text.length) {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return null;
    const n = Number(m[1]);
    ms += m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : m[2] === 'h' ? n * 3_600_000 : n * 86_400_000;
    i = re.lastIndex;
  }
  return i === 0 ? null : ms;
}
