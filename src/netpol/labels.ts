/**
 * Label selectors with the API's semantics (`metav1.LabelSelectorAsSelector`): `matchLabels` and
 * `matchExpressions` are ANDed; `In` needs the label with one of the values, `NotIn` holds when
 * the label is absent or has none of them, `Exists` and `DoesNotExist` look at the key only; an
 * empty selector selects everything. Where a selector is absent the caller decides (a peer's
 * absent `namespaceSelector` means "the policy's namespace", not "every namespace").
 *
 * Also the syntax checks the API server applies to label keys and values
 * (`k8s.io/apimachinery/pkg/util/validation`: `IsQualifiedName`, `IsValidLabelValue`).
 *
 * @module
 */
import type { LabelSelector } from '../model/kubernetes.js';

/** One requirement of a compiled selector. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: ReadonlySet<string>;
}

/** A selector ready to match: every requirement must hold; none means everything. */
export interface CompiledSelector {
  readonly requirements: readonly LabelRequirement[];
}

/** A selector that selects everything (`{}`). */
export const SELECT_ALL: CompiledSelector = { requirements: [] };

/**
 * Compiles a selector that passed validation. `matchLabels` entries become `In` requirements
 * with one value, as `LabelSelectorAsSelector` makes them.
 */
export function compileSelector(sel: LabelSelector): CompiledSelector {
  const requirements: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) requirements.push({ key, operator: 'In', values: new Set([value]) });
  for (const e of sel.matchExpressions ?? []) requirements.push({ key: e.key, operator: e.operator, values: new Set(e.values ?? []) });
  return { requirements };
}

/** Whether the labels satisfy the selector. */
export function selectorMatches(sel: CompiledSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const r of sel.requirements) {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.operator) {
      case 'In':
        if (!has || !r.values.has(labels[r.key]!)) return false;
        break;
      case 'NotIn':
        if (has && r.values.has(labels[r.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** The selector in `kubectl describe`'s words (`app=web,tier in (a,b)`), `<all>` when empty. */
export function describeSelector(sel: LabelSelector | undefined): string {
  if (sel === undefined) return '<none>';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const vals = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.length === 0 ? '<all>' : parts.join(',');
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** `IsDNS1123Subdomain`: what is wrong with the name, or nothing. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errs.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character");
  }
  return errs;
}

/** `IsQualifiedName` (a label key: `[prefix/]name`): what is wrong with it, or nothing. */
export function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of dns1123SubdomainErrors(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [`a qualified name ${QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${QUALIFIED_NAME_MSG}`);
  return errs;
}

/** `IsValidLabelValue`: what is wrong with the value, or nothing (empty is valid). */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(value)) {
    errs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return errs;
}
