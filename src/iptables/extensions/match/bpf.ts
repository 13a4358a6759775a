/**
 * `-m bpf` (`libxt_bpf.c`, kernel `xt_bpf.c`): a classic BPF program run on the packet.
 * `--bytecode "N,code jt jf k,…"` as `nfbpf_compile` prints it (N instructions, 1 to 64),
 * read as `bpf_parse_string` reads it; the kernel then checks the program as `bpf_check_classic`
 * does (known opcodes, jumps inside the program, scratch memory slots below 16, no division by a
 * constant 0, a return last, no scratch slot read before it is written). `--object-pinned PATH`
 * needs an eBPF object pinned on the machine: none is, so it is refused as iptables refuses it
 * then. Neither can be negated.
 *
 * Not evaluated: the program reads packet bytes, which the engine does not model. It is assumed
 * not to match, and the trace says so.
 *
 * @module
 */
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, missing, noInvert, saveString, unknownOption } from '../values.js';

/** One classic BPF instruction. */
export interface BpfInsn {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

/** Options of `-m bpf`. */
export interface BpfOptions {
  readonly program: readonly BpfInsn[];
}

/** `XT_BPF_MAX_NUM_INSTR`. */
const MAX_INSTR = 64;
/** `BPF_MEMWORDS`. */
const MEMWORDS = 16;

/** The opcodes `bpf_check_classic` knows. */
const OPCODES = new Set([
  0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c, 0x44, 0x4c, 0x54, 0x5c, 0x64, 0x6c, 0x74, 0x7c, 0x84, 0x94, 0x9c, 0xa4, 0xac, // ALU
  0x20, 0x28, 0x30, 0x80, 0x40, 0x48, 0x50, 0x00, 0x60, // LD
  0x81, 0xb1, 0x01, 0x61, // LDX
  0x02, 0x03, // ST, STX
  0x07, 0x87, // TAX, TXA
  0x06, 0x16, // RET K, RET A
  0x05, 0x15, 0x1d, 0x35, 0x3d, 0x25, 0x2d, 0x45, 0x4d, // JMP
]);

/** glibc `sscanf` `%u`-style: optional blanks, optional sign, decimal digits, kept modulo 2^bits. */
function scanUnsigned(s: string, at: number, bits: number): { value: number; end: number } | null {
  const m = /^[ \t\n\v\f\r]*([+-]?)(\d+)/.exec(s.slice(at));
  if (!m) return null;
  const mod = 2n ** BigInt(bits);
  let v = BigInt(m[2]!) % mod;
  if (m[1] === '-') v = (mod - v) % mod;
  return { value: Number(v), end: at + m[0].length };
}

function parseBytecode(o: OptionOccurrence): BpfInsn[] {
  const text = argOf(o);
  const len = scanUnsigned(text, 0, 16);
  if (!len || text[len.end] !== ',') badValue(o, 'bpf: error parsing program length');
  if (len.value === 0) badValue(o, 'bpf: illegal zero length program');
  if (len.value > MAX_INSTR) badValue(o, `bpf: number of instructions exceeds maximum of ${MAX_INSTR}`);
  const program: BpfInsn[] = [];
  let at: number | null = len.end + 1;
  while (at !== null && at < text.length) {
    if (program.length >= len.value) badValue(o, 'bpf: real program length exceeds the encoded length parameter');
    const code = scanUnsigned(text, at, 16);
    const jt = code && /^[ \t\n\v\f\r]/.test(text.slice(code.end)) ? scanUnsigned(text, code.end, 8) : null;
    const jf = jt && /^[ \t\n\v\f\r]/.test(text.slice(jt.end)) ? scanUnsigned(text, jt.end, 8) : null;
    const k = jf && /^[ \t\n\v\f\r]/.test(text.slice(jf.end)) ? scanUnsigned(text, jf.end, 32) : null;
    if (!code || !jt || !jf || !k) badValue(o, `bpf: error at instr ${program.length}`);
    program.push({ code: code.value, jt: jt.value, jf: jf.value, k: k.value });
    const comma = text.indexOf(',', at);
    at = comma < 0 ? null : comma + 1;
  }
  if (program.length !== len.value) badValue(o, 'bpf: parsed program length is less than the encoded length parameter');
  return program;
}

/** `bpf_check_classic` (with `check_load_and_stores`): why the kernel refuses the program, or null. */
export function bpfCheck(program: readonly BpfInsn[]): string | null {
  const n = program.length;
  for (let pc = 0; pc < n; pc++) {
    const { code, jt, jf, k } = program[pc]!;
    if (!OPCODES.has(code)) return `instruction ${pc}: unknown opcode ${code}`;
    if ((code === 0x34 || code === 0x94) && k === 0) return `instruction ${pc}: division by a constant 0`;
    if ((code === 0x60 || code === 0x61 || code === 0x02 || code === 0x03) && k >= MEMWORDS) return `instruction ${pc}: scratch memory slot ${k} (0-15)`;
    if (code === 0x05 && k >= n - pc - 1) return `instruction ${pc}: jump past the end`;
    if ((code & 0x07) === 0x05 && code !== 0x05 && (pc + jt + 1 >= n || pc + jf + 1 >= n)) return `instruction ${pc}: jump past the end`;
  }
  const last = program[n - 1]!.code;
  if (last !== 0x06 && last !== 0x16) return 'the last instruction is not a return';
  // check_load_and_stores: along every path, a slot is stored before it is loaded.
  const full = (1 << MEMWORDS) - 1;
  const masks = new Array<number>(n).fill(full);
  let memvalid = 0;
  for (let pc = 0; pc < n; pc++) {
    memvalid &= masks[pc]!;
    const { code, jt, jf, k } = program[pc]!;
    if (code === 0x02 || code === 0x03) memvalid |= 1 << k;
    else if (code === 0x60 || code === 0x61) {
      if (!(memvalid & (1 << k))) return `instruction ${pc}: scratch memory slot ${k} read before it is written`;
    } else if (code === 0x05) {
      masks[pc + 1 + k] = masks[pc + 1 + k]! & memvalid;
      memvalid = full;
    } else if ((code & 0x07) === 0x05) {
      masks[pc + 1 + jt] = masks[pc + 1 + jt]! & memvalid;
      masks[pc + 1 + jf] = masks[pc + 1 + jf]! & memvalid;
      memvalid = full;
    }
  }
  return null;
}

/** `-m bpf`. */
export const bpf: MatchExtension<BpfOptions> = {
  kind: 'match',
  name: 'bpf',
  family: 'both',
  options: [
    { name: 'bytecode', arg: true, negatable: true },
    { name: 'object-pinned', arg: true, negatable: true },
  ],
  parse(occurrences, ctx) {
    let program: BpfInsn[] | undefined;
    for (const o of occurrences) {
      noInvert(o);
      if (o.name === 'bytecode') {
        program = parseBytecode(o);
        const why = bpfCheck(program);
        if (why !== null) badValue(o, `bpf: the kernel refuses the program (${why}): RULE_APPEND failed (Invalid argument)`);
      } else if (o.name === 'object-pinned') badValue(o, `bpf: failed to get bpf object (no eBPF object is pinned at ${argOf(o)})`);
      else unknownOption('bpf', o);
    }
    if (!program) missing(ctx, 'bpf', 'one of --bytecode or --object-pinned must be specified');
    return { program };
  },
  save(o) {
    return `--bytecode ${saveString(`${o.program.length},${o.program.map((i) => `${i.code} ${i.jt} ${i.jf} ${i.k}`).join(',')}`)}`;
  },
  lower: () => () => false,
  evaluates: 'assumed',
  assumption() {
    return 'packet bytes are not modelled: the BPF program is not run, and -m bpf is taken not to match';
  },
};
