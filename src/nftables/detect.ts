/**
 * Which front end reads a rules file: nftables when its first statement is an nft command or
 * block, iptables-save/restore text otherwise (DESIGN.md "nftables input").
 *
 * @module
 */
import { expectArgument } from '../model/guard.js';

/** The two rule-file syntaxes. */
export type RulesSyntax = 'iptables' | 'nft';

const NFT_FIRST_WORDS = new Set(['table', 'add', 'create', 'flush', 'insert', 'delete', 'define', 'replace', 'destroy', 'include']);

/**
 * Guesses the syntax of a rules file from its first statement: `table …`, `add …`, `flush …`,
 * `insert …`, `delete …`, `define …` (after comments, blank lines and a `#!…nft -f` line) mean
 * nftables; anything else is iptables-save/restore text.
 *
 * @example
 * ```ts
 * detectRulesSyntax('#!/usr/sbin/nft -f\nflush ruleset\n'); // "nft"
 * detectRulesSyntax('*nat\n-A OUTPUT -j ACCEPT\nCOMMIT\n');  // "iptables"
 * ```
 */
export function detectRulesSyntax(text: string): RulesSyntax {
  expectArgument(text, 'string', 'text');
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const word = /^[a-z]+/.exec(line)?.[0];
    return word !== undefined && NFT_FIRST_WORDS.has(word) ? 'nft' : 'iptables';
  }
  return 'iptables';
}
