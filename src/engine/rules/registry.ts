/**
 * The extension modules the engine uses, injectable so that tests and embedders can add their own.
 *
 * @module
 */
import { MATCHES, TARGETS } from '../../iptables/extensions/registry.js';
import type { MatchExtension, TargetExtension } from '../../iptables/extensions/types.js';

/** Match and target modules by name. */
export interface ExtensionRegistry {
  readonly matches: ReadonlyMap<string, MatchExtension>;
  readonly targets: ReadonlyMap<string, TargetExtension>;
}

/** The built-in registry (`src/iptables/extensions/registry.ts`). */
export function defaultRegistry(): ExtensionRegistry {
  return { matches: MATCHES, targets: TARGETS };
}

/** Whether a match module says the engine only assumes its result (`evaluates: 'assumed'`). */
export function isAssumed(ext: MatchExtension): boolean {
  return (ext as { readonly evaluates?: string }).evaluates === 'assumed';
}

/** The comment of a rule (`-m comment --comment`), if any. */
export function ruleComment(matches: readonly { readonly name: string; readonly options: Readonly<Record<string, unknown>> }[]): string | null {
  for (const m of matches) {
    if (m.name !== 'comment') continue;
    const c = m.options['comment'];
    if (typeof c === 'string') return c;
  }
  return null;
}
