/**
 * What iptables-save prints after every case of test/fixtures/linkerd/cases.json, through the
 * shared parser and printer, byte for byte (the IPv4 body, then the IPv6 body when the case has one).
 */
import { describe, expect, it } from 'vitest';
import { parseProxyInitArgs } from '../../../src/compile/linkerd/config.js';
import { compileLinkerdCni } from '../../../src/compile/linkerd/cni.js';
import { linkerdRulesets, renderLinkerd } from '../../../src/compile/linkerd/output.js';
import { compileProxyInit } from '../../../src/compile/linkerd/proxy-init.js';
import { cniCases, cniInput, expectedSave, fixture, proxyInitCases } from './fixtures.js';

describe('iptables-save after proxy-init', () => {
  it.each(proxyInitCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const parsed = parseProxyInitArgs(c.args!);
    if (!parsed.ok) throw new Error(parsed.error);
    const result = compileProxyInit(parsed.config, c.existing !== undefined ? { existing: c.existing } : {});
    expect(renderLinkerd(result, 'save')).toBe(expectedSave(c));
    const bins = linkerdRulesets(result).map((r) => r.saveBin);
    if (result.runs.length > 0) expect(bins).toEqual(c.save6Binary ? [c.saveBinary, c.save6Binary] : [c.saveBinary]);
  });
});

describe('iptables-save after linkerd-cni', () => {
  it.each(cniCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = compileLinkerdCni(cniInput(c));
    expect(renderLinkerd(result, 'save')).toBe(expectedSave(c));
  });
});

describe('other renderings', () => {
  const c = proxyInitCases.find((x) => x.name === 'cli-defaults-dual-stack')!;
  const parsed = parseProxyInitArgs(c.args!);
  if (!parsed.ok) throw new Error(parsed.error);
  const result = compileProxyInit(parsed.config);

  it('restore: each family body, headed by the restore binary it is for', () => {
    const text = renderLinkerd(result, 'restore');
    const [v4, v6] = text.split(/^(?=# )/m);
    expect(v4).toMatch(/^# iptables-legacy-restore input /);
    expect(v6).toMatch(/^# ip6tables-legacy-restore input /);
    expect(v4!.replace(/^#.*\n/, '')).toBe(fixture(c.save));
    expect(v6!.replace(/^#.*\n/, '')).toBe(fixture(c.save6!));
  });

  it('json: the rule sets, IPv4 then IPv6', () => {
    const sets = JSON.parse(renderLinkerd(result, 'json')) as { family: number; tables: { name: string; chains: { name: string; rules: unknown[] }[] }[] }[];
    expect(sets.map((s) => s.family)).toEqual([4, 6]);
    const nat = sets[0]!.tables.find((t) => t.name === 'nat')!;
    expect(nat.chains.map((ch) => ch.name).sort()).toEqual(['INPUT', 'OUTPUT', 'POSTROUTING', 'PREROUTING', 'PROXY_INIT_OUTPUT', 'PROXY_INIT_REDIRECT']);
    expect(nat.chains.find((ch) => ch.name === 'PROXY_INIT_OUTPUT')!.rules).toHaveLength(3);
  });

  it('commands: the .commands file', () => {
    expect(renderLinkerd(result, 'commands')).toBe(fixture(c.commands));
  });
});
