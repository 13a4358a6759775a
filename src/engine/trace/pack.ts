/**
 * Traces in a compact form for the trip from a batch worker to the calling thread: every event
 * becomes a few numbers in one `Int32Array` (its kind, then each field in the order the engine
 * writes them: a number as its bits, a string as its index in a table of the message's strings,
 * an object such as a `Span` as its index in a table of JSON texts, each kept once), which is
 * moved, not copied. Events are rebuilt as objects, with the same fields in the same order, only
 * when a result's trace is read. `test/engine/trace-pack.test.ts` checks that every kind of event
 * comes back as the same JSON text.
 *
 * @module
 * @internal
 */
import type { RulePosition, TraceEvent, TraceSink } from './events.js';

/**
 * How a field is stored, in 32 bits: a string or null (its index, {@link NULL}, or {@link ABSENT}
 * for a field its event leaves out), a number from 0 to 2^32 - 1 (its bits), a number or null
 * (two slots: 1 and the number, or 0 and 0), a boolean (1 or 0), an object or null (its index, or
 * {@link NULL}). An event with any other number is stored whole, as JSON.
 */
const Kind = { Str: 0, Num: 1, Bool: 2, Obj: 3, NumOrNull: 4 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

const NULL = -1;
/** Only `reason` of a conntrack event is ever left out. */
const ABSENT = -2;

type Field = readonly [string, Kind];

const POSITION: readonly Field[] = [
  ['hook', Kind.Str],
  ['table', Kind.Str],
  ['chain', Kind.Str],
  ['rule', Kind.Num],
];

/**
 * The fields of each event kind after `packet`, `label` and `type`, in the order every place
 * that builds one writes them (the order `JSON.stringify` prints).
 */
const SCHEMA: Readonly<Record<TraceEvent['type'], readonly Field[]>> = {
  packet: [
    ['family', Kind.Num], ['proto', Kind.Str], ['src', Kind.Str], ['sport', Kind.Num], ['dst', Kind.Str], ['dport', Kind.Num],
    ['flags', Kind.Str], ['origin', Kind.Str], ['iface', Kind.Str], ['uid', Kind.NumOrNull], ['gid', Kind.NumOrNull], ['mark', Kind.Num],
  ],
  route: [
    ['hook', Kind.Str], ['dst', Kind.Str], ['result', Kind.Str], ['dev', Kind.Str], ['via', Kind.Str], ['src', Kind.Str],
    ['table', Kind.NumOrNull], ['reason', Kind.Str],
  ],
  reroute: [['hook', Kind.Str], ['table', Kind.Str], ['dst', Kind.Str], ['result', Kind.Str], ['dev', Kind.Str], ['via', Kind.Str]],
  table: [['hook', Kind.Str], ['table', Kind.Str]],
  rule: [...POSITION, ['target', Kind.Str], ['action', Kind.Str], ['text', Kind.Str], ['comment', Kind.Str], ['span', Kind.Obj]],
  return: POSITION,
  policy: [...POSITION, ['policy', Kind.Str]],
  assumed: [...POSITION, ['match', Kind.Str], ['result', Kind.Bool], ['assumption', Kind.Str]],
  verdict: [['hook', Kind.Str], ['table', Kind.Str], ['verdict', Kind.Str], ['reason', Kind.Str]],
  conntrack: [
    ['hook', Kind.Str], ['action', Kind.Str], ['state', Kind.Str], ['direction', Kind.Str], ['zone', Kind.Num], ['id', Kind.NumOrNull],
    ['reason', Kind.Str],
  ],
  nat: [['hook', Kind.Str], ['manip', Kind.Str], ['action', Kind.Str], ['from', Kind.Str], ['to', Kind.Str], ['reason', Kind.Str]],
  effect: [...POSITION, ['target', Kind.Str], ['detail', Kind.Str]],
  socket: [['result', Kind.Str], ['address', Kind.Str], ['port', Kind.Num], ['socket', Kind.Str]],
  wire: [['dev', Kind.Str], ['src', Kind.Str], ['sport', Kind.Num], ['dst', Kind.Str], ['dport', Kind.Num]],
  loopback: [],
  drop: [['hook', Kind.Str], ['reason', Kind.Str], ['reject', Kind.Str]],
};

const TYPES = Object.keys(SCHEMA) as TraceEvent['type'][];
const FIELDS: readonly (readonly Field[])[] = TYPES.map((t) => SCHEMA[t]);
const TYPE_CODE = new Map<string, number>(TYPES.map((t, i) => [t, i]));
/** The kind stored for an event whose shape the schema does not know: its JSON text, whole. */
const WHOLE = 255;

/** What a batch message carries of its results' traces. */
export interface PackedTraces {
  /** The events of every result, one after another; result i's end at `end[i]`. */
  readonly values: Int32Array;
  readonly end: Int32Array;
  /** Per result: `traceOmitted`, or 0 when absent. */
  readonly omitted: Int32Array;
  /** JSON texts of the objects (spans) and of whole events the schema does not describe. */
  readonly objects: readonly string[];
}

/**
 * Packs traces; `intern` gives a string's index in the message's string table (shared with the
 * rest of the results).
 */
export class TracePacker implements TraceSink {
  private values: Int32Array;
  /** Set when a number of the event being stored does not fit in 32 bits: it is stored whole. */
  private odd = false;
  private n = 0;
  private readonly objects: string[] = [];
  private readonly objectIndex = new Map<object, number>();
  private readonly end: Int32Array;
  private readonly omitted: Int32Array;
  private results = 0;

  private readonly intern: (s: string) => number;

  constructor(count: number, intern: (s: string) => number) {
    this.intern = intern;
    // About 300 numbers per traced connection through a mesh pod's rules; grown when short.
    this.values = new Int32Array(Math.max(1024, count * 320));
    this.end = new Int32Array(count);
    this.omitted = new Int32Array(count);
  }

  private room(k: number): void {
    if (this.n + k <= this.values.length) return;
    const bigger = new Int32Array(Math.max(this.values.length * 2, this.n + k));
    bigger.set(this.values.subarray(0, this.n));
    this.values = bigger;
  }

  private object(o: object): number {
    let i = this.objectIndex.get(o);
    if (i === undefined) {
      i = this.objects.length;
      this.objects.push(JSON.stringify(o));
      this.objectIndex.set(o, i);
    }
    return i;
  }

  private whole(e: TraceEvent): void {
    this.room(2);
    this.values[this.n++] = WHOLE;
    this.values[this.n++] = this.objects.push(JSON.stringify(e)) - 1;
  }

  private s(x: string | null | undefined): void {
    this.values[this.n++] = x === null ? NULL : x === undefined ? ABSENT : this.intern(x);
  }

  private u32(x: number): void {
    if (x >>> 0 !== x) this.odd = true;
    this.values[this.n++] = x;
  }

  private num(x: number | null): void {
    if (x === null) {
      this.values[this.n++] = 0;
      this.values[this.n++] = 0;
    } else {
      this.values[this.n++] = 1;
      this.u32(x);
    }
  }

  private position(e: RulePosition): void {
    this.s(e.hook);
    this.s(e.table);
    this.s(e.chain);
    this.u32(e.rule);
  }

  /** Adds the next result's trace (its events, then {@link endResult}). */
  add(events: readonly TraceEvent[], omitted: number): void {
    for (const e of events) this.event(e);
    this.endResult(omitted);
  }

  /** Ends the current result's trace: its events are those added since the previous end. */
  endResult(omitted: number): void {
    this.omitted[this.results] = omitted;
    this.end[this.results++] = this.n;
  }

  /**
   * Adds an event to the current result's trace. Each kind's fields are read by name, in
   * {@link SCHEMA}'s order (one read site per kind keeps the reads cheap; the test checks the two
   * orders agree).
   */
  event(e: TraceEvent): void {
    const code = TYPE_CODE.get(e.type);
    if (code === undefined) {
      this.whole(e);
      return;
    }
    // Two slots per field at most (a number or null).
    this.room(3 + 2 * FIELDS[code]!.length);
    const start = this.n;
    this.odd = false;
    this.values[this.n++] = code;
    this.u32(e.packet);
    this.s(e.label);
    switch (e.type) {
      case 'packet':
        this.u32(e.family);
        this.s(e.proto);
        this.s(e.src);
        this.u32(e.sport);
        this.s(e.dst);
        this.u32(e.dport);
        this.s(e.flags);
        this.s(e.origin);
        this.s(e.iface);
        this.num(e.uid);
        this.num(e.gid);
        this.u32(e.mark);
        break;
      case 'route':
        this.s(e.hook);
        this.s(e.dst);
        this.s(e.result);
        this.s(e.dev);
        this.s(e.via);
        this.s(e.src);
        this.num(e.table);
        this.s(e.reason);
        break;
      case 'reroute':
        this.s(e.hook);
        this.s(e.table);
        this.s(e.dst);
        this.s(e.result);
        this.s(e.dev);
        this.s(e.via);
        break;
      case 'table':
        this.s(e.hook);
        this.s(e.table);
        break;
      case 'rule':
        this.position(e);
        this.s(e.target);
        this.s(e.action);
        this.s(e.text);
        this.s(e.comment);
        this.values[this.n++] = e.span === null ? NULL : this.object(e.span);
        break;
      case 'return':
        this.position(e);
        break;
      case 'policy':
        this.position(e);
        this.s(e.policy);
        break;
      case 'assumed':
        this.position(e);
        this.s(e.match);
        this.values[this.n++] = e.result ? 1 : 0;
        this.s(e.assumption);
        break;
      case 'verdict':
        this.s(e.hook);
        this.s(e.table);
        this.s(e.verdict);
        this.s(e.reason);
        break;
      case 'conntrack':
        this.s(e.hook);
        this.s(e.action);
        this.s(e.state);
        this.s(e.direction);
        this.u32(e.zone);
        this.num(e.id);
        this.s(e.reason);
        break;
      case 'nat':
        this.s(e.hook);
        this.s(e.manip);
        this.s(e.action);
        this.s(e.from);
        this.s(e.to);
        this.s(e.reason);
        break;
      case 'effect':
        this.position(e);
        this.s(e.target);
        this.s(e.detail);
        break;
      case 'socket':
        this.s(e.result);
        this.s(e.address);
        this.u32(e.port);
        this.s(e.socket);
        break;
      case 'wire':
        this.s(e.dev);
        this.s(e.src);
        this.u32(e.sport);
        this.s(e.dst);
        this.u32(e.dport);
        break;
      case 'loopback':
        break;
      case 'drop':
        this.s(e.hook);
        this.s(e.reason);
        this.s(e.reject);
        break;
    }
    if (this.odd) {
      this.n = start;
      this.whole(e);
    }
  }

  finish(): PackedTraces {
    return { values: this.values.subarray(0, this.n), end: this.end, omitted: this.omitted, objects: this.objects };
  }
}

/** Rebuilds the events stored in `values[from, to)`. */
export function unpackTrace(values: Int32Array, from: number, to: number, strings: readonly string[], objects: readonly string[]): TraceEvent[] {
  const out: TraceEvent[] = [];
  let i = from;
  while (i < to) {
    const code = values[i++]!;
    if (code === WHOLE) {
      out.push(JSON.parse(objects[values[i++]!]!) as TraceEvent);
      continue;
    }
    const e: Record<string, unknown> = { packet: values[i++]! >>> 0, label: strings[values[i++]!]!, type: TYPES[code]! };
    for (const [name, kind] of FIELDS[code]!) {
      const x = values[i++]!;
      if (kind === Kind.Num) e[name] = x >>> 0;
      else if (kind === Kind.NumOrNull) e[name] = x === 0 ? (i++, null) : values[i++]! >>> 0;
      else if (x === ABSENT) continue;
      else if (kind === Kind.Bool) e[name] = x === 1;
      else if (x === NULL) e[name] = null;
      else if (kind === Kind.Obj) e[name] = JSON.parse(objects[x]!) as unknown;
      else e[name] = strings[x]!;
    }
    out.push(e as unknown as TraceEvent);
  }
  return out;
}
