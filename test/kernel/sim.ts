/**
 * The simulator entry points the kernel-differential tests use, typed locally and loaded at run
 * time from the package root (`src/index.ts`), so that these tests typecheck whatever state the
 * library is in. When an entry point is missing, {@link loadSimulator} says which.
 *
 * The signatures are the contracts the tests rely on (DESIGN.md "Library", "fmt", "connect").
 */
import type { SimProbe } from './generate.js';

/** `formatIptablesSave(text, { family, strict })`: the canonical `iptables-save` text; throws on rejected input. */
export type FormatIptablesSave = (text: string, options: { family: 4 | 6; strict: boolean }) => string;

/** What `Netns.connect` returns (the `connect --json` object). */
export interface SimConnectResult {
  readonly outcome: 'local' | 'remote' | 'refused' | 'dropped';
  readonly address: string | null;
  readonly port: number | null;
  readonly originalDestination: string | null;
  /** The source the accepting side saw (`IP:PORT`), for `local` and `remote`; else null. */
  readonly source?: string | null;
  /** What the client's connect() returns (null when it connected). */
  readonly errno?: string | null;
  readonly steps?: readonly unknown[];
  readonly reason?: string;
  /** The events of the exchange (when tracing). */
  readonly trace?: readonly { readonly type: string; readonly packet: number; readonly [field: string]: unknown }[];
}

/** A modelled pod. */
export interface SimNetns {
  connect(probe: SimProbe, options?: { trace?: boolean }): SimConnectResult;
  /** Moves the virtual clock on (`Netns.advance`). */
  advance(seconds: number): void;
}

/** `new Netns({ rules, rules6?, listen })`. */
export type SimNetnsConstructor = new (options: { readonly rules: string; readonly rules6?: string; readonly listen: readonly (number | string | { readonly address?: string; readonly port: number; readonly transparent?: boolean })[]; readonly [option: string]: unknown }) => SimNetns;

/** The loaded entry points. */
export interface Simulator {
  readonly formatIptablesSave: FormatIptablesSave;
  readonly Netns: SimNetnsConstructor;
}

// A variable specifier: resolved at run time only, so a missing module is a test failure with a
// message, not a type error in an unrelated suite.
const ROOT = '../../src/index.js';

let loaded: Promise<Record<string, unknown>> | undefined;

async function root(): Promise<Record<string, unknown>> {
  loaded ??= import(/* @vite-ignore */ ROOT) as Promise<Record<string, unknown>>;
  return loaded;
}

/** `formatIptablesSave` from the package root; rejects with a clear message when it is not exported yet. */
export async function loadFormat(): Promise<FormatIptablesSave> {
  const m = await root();
  const f = m['formatIptablesSave'];
  if (typeof f !== 'function') throw new Error('src/index.ts does not export formatIptablesSave(text, { family, strict }) yet');
  return f as FormatIptablesSave;
}

/** `Netns` from the package root; rejects with a clear message when it is not exported yet. */
export async function loadNetns(): Promise<SimNetnsConstructor> {
  const m = await root();
  const c = m['Netns'];
  if (typeof c !== 'function') throw new Error('src/index.ts does not export Netns yet');
  return c as SimNetnsConstructor;
}

/** Both entry points. */
export async function loadSimulator(): Promise<Simulator> {
  return { formatIptablesSave: await loadFormat(), Netns: await loadNetns() };
}

/** A thrown value as one line: code and message for library errors. */
export function describeError(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${e.message}` : `${e.name}: ${e.message}`;
  }
  return String(e);
}
