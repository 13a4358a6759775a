import { describe, expect, it } from 'vitest';
import { parseIstioIptablesArgs } from '../../../src/compile/istio/args.js';
import { compileIstioCni } from '../../../src/compile/istio/cni.js';
import { compileIstio, type IstioCompileResult } from '../../../src/compile/istio/compile.js';
import { INJECTED_ISTIO_INIT_ARGS } from '../../../src/compile/istio/defaults.js';
import { formatIstioResult, formatIstioSave, istioRulesets } from '../../../src/compile/istio/format.js';
import { casesIn, type CniCase, fixture, fixtureExists, podForCniCase, type SidecarCase, toIstioConfig } from './vectors.js';

/** What `iptables-save` then `ip6tables-save` printed after the golden was loaded (kernel-save/). */
function kernelSave(key: string): string | undefined {
  if (!fixtureExists(`kernel-save/${key}.save`)) return undefined;
  const v6 = fixtureExists(`kernel-save/${key}.save6`) ? fixture(`kernel-save/${key}.save6`) : '';
  return fixture(`kernel-save/${key}.save`) + v6;
}

/** The goldens iptables-restore refused: owner group names (`java`, `ftp`) the test machine's group database lacks. */
const rejectedKeys = Object.keys(JSON.parse(fixture('kernel-save/rejected.json')) as Record<string, unknown>).filter((k) => k !== '_meta');

const results: [string, () => IstioCompileResult][] = [
  ...casesIn<SidecarCase>('sidecar-capture').map(
    ([name, c]) => [`sidecar-capture/${name}`, () => compileIstio(toIstioConfig(c.config))] as [string, () => IstioCompileResult],
  ),
  ...casesIn<CniCase>('cni-plugin')
    .filter(([name]) => name !== 'status-ports')
    .map(([name, c]) => [`cni-plugin/${name}`, () => compileIstioCni({ pod: podForCniCase(c) })] as [string, () => IstioCompileResult]),
  [
    'cni-plugin/status-ports',
    () => compileIstioCni({ pod: podForCniCase(casesIn<CniCase>('cni-plugin').find(([n]) => n === 'basic')![1]), upstreamVersion: '1.12' }),
  ],
  ['derived/injected-sidecar-default', () => compileIstio(parseIstioIptablesArgs(INJECTED_ISTIO_INIT_ARGS))],
];
const accepted = results.filter(([key]) => kernelSave(key) !== undefined);

describe('--format save is what iptables-save prints after the tool ran (kernel-save/)', () => {
  it('has a kernel dump for every case but the four iptables-restore refused', () => {
    expect(accepted).toHaveLength(34);
    const missing = results.filter(([key]) => kernelSave(key) === undefined).map(([key]) => key);
    expect(missing.sort()).toEqual(rejectedKeys.sort());
  });

  it.each(accepted)('%s', (key, compile) => {
    expect(formatIstioSave(compile())).toBe(kernelSave(key));
  });

  it.each(rejectedKeys)('%s: refused, as iptables-restore refuses an unknown group name', (key) => {
    const compile = results.find(([k]) => k === key)![1];
    expect(() => formatIstioSave(compile())).toThrow(/java|ftp/);
  });

  it('json is the loaded rule sets, IPv4 first', () => {
    const result = compileIstio({ inboundPortsInclude: '*', enableIPv6: true });
    const parsed = JSON.parse(formatIstioResult(result, 'json')) as { family: number }[];
    expect(parsed.map((r) => r.family)).toEqual([4, 6]);
    expect(istioRulesets(result)[0]!.tables.map((t) => t.name)).toEqual(['nat']);
  });
});
