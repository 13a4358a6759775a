/**
 * Every case of test/fixtures/linkerd/cases.json: the commands proxy-init / linkerd-cni run, byte
 * for byte, and the failures they end with.
 */
import { describe, expect, it } from 'vitest';
import { parseProxyInitArgs } from '../../../src/compile/linkerd/config.js';
import { compileLinkerdCni } from '../../../src/compile/linkerd/cni.js';
import { injectProxyInitArgs } from '../../../src/compile/linkerd/injector.js';
import { compileProxyInit, type ProxyInitResult } from '../../../src/compile/linkerd/proxy-init.js';
import { cniCases, cniInput, expectedCommands, proxyInitCases, type LinkerdCase } from './fixtures.js';

function text(result: { commands: readonly string[] }): string {
  return result.commands.map((l) => `${l}\n`).join('');
}

function compileCase(c: LinkerdCase): ProxyInitResult {
  const parsed = parseProxyInitArgs(c.args!);
  if (!parsed.ok) throw new Error(parsed.error);
  expect(parsed.positional).toEqual([]);
  return compileProxyInit(parsed.config, c.existing !== undefined ? { existing: c.existing } : {});
}

function expectUpstreamError(result: Pick<ProxyInitResult, 'error' | 'commands'>, c: LinkerdCase): void {
  const e = c.expectedError;
  if (!e) {
    expect(result.error).toBeUndefined();
    return;
  }
  expect(result.error).toBeDefined();
  const got = result.error!;
  expect(got.stage).toBe(e.stage);
  if (e.stage === 'iptables') {
    expect(got.pass).toBe(e.pass);
    expect(got.failingCommandLine).toBe(e.failingCommandLine);
    expect(got.failingCommandLine).toBe(result.commands.length);
    expect(got.toolExitCode).toBe(e.exitCode);
    expect(got.toolStderr).toBe(e.stderr);
    expect(got.exitCode).toBe(e.proxyInitExitCode);
    expect(got.stderrFirstLine).toBe(e.proxyInitStderrFirstLine);
  } else {
    expect(got.message).toBe(e.message);
    expect(result.commands.length).toBe(e.commandsRun);
    if (e.proxyInitStderrFirstLine) expect(got.stderrFirstLine).toBe(e.proxyInitStderrFirstLine);
    if (e.proxyInitExitCode !== undefined) expect(got.exitCode).toBe(e.proxyInitExitCode);
  }
}

describe('proxy-init vectors', () => {
  it.each(proxyInitCases.map((c) => [c.name, c] as const))('%s: commands', (_name, c) => {
    const result = compileCase(c);
    expect(text(result)).toBe(expectedCommands(c));
  });

  it.each(proxyInitCases.map((c) => [c.name, c] as const))('%s: outcome', (_name, c) => {
    expectUpstreamError(compileCase(c), c);
  });
});

describe('linkerd-cni vectors', () => {
  it.each(cniCases.map((c) => [c.name, c] as const))('%s: commands', (_name, c) => {
    const result = compileLinkerdCni(cniInput(c));
    expect(text(result)).toBe(expectedCommands(c));
    expect(result.netnsWrapper).toBe(c.netnsWrapper ?? 'nsenter --net=<CNI_NETNS> --');
  });

  it.each(cniCases.map((c) => [c.name, c] as const))('%s: skip decision and outcome', (_name, c) => {
    const result = compileLinkerdCni(cniInput(c));
    expect(result.skipped?.message).toBe(c.cniSkipped);
    expectUpstreamError(result, c);
  });

  it.each(cniCases.filter((c) => c.equivalentArgs).map((c) => [c.name, c] as const))(
    '%s: the equivalent proxy-init arguments build the same commands',
    (_name, c) => {
      const parsed = parseProxyInitArgs(c.equivalentArgs!);
      if (!parsed.ok) throw new Error(parsed.error);
      expect(text(compileProxyInit(parsed.config))).toBe(expectedCommands(c));
      const ours = compileLinkerdCni(cniInput(c));
      const again = parseProxyInitArgs(ours.equivalentArgs!);
      if (!again.ok) throw new Error(again.error);
      expect(text(compileProxyInit(again.config))).toBe(expectedCommands(c));
    },
  );

  it('writes the commands as the plugin runs them when CNI_NETNS is given', () => {
    const c = cniCases.find((x) => x.name === 'cni-default')!;
    const result = compileLinkerdCni({ ...cniInput(c), netns: '/var/run/netns/cni-1234' });
    const expected = expectedCommands(c).trimEnd().split('\n').map((l) => `nsenter --net=/var/run/netns/cni-1234 -- ${l}`);
    expect(result.commands).toEqual(expected);
  });
});

describe('injected linkerd-init arguments', () => {
  const byName = new Map(proxyInitCases.map((c) => [c.name, c]));

  it('default pod: the args of injected-default', () => {
    expect(injectProxyInitArgs({}).args).toEqual(byName.get('injected-default')!.args);
  });

  it('control-plane pod (label linkerd.io/control-plane-component): the args of injected-control-plane', () => {
    const pod = { kind: 'Pod', metadata: { name: 'd', labels: { 'linkerd.io/control-plane-component': 'destination' } }, spec: { containers: [{ name: 'destination' }] } };
    expect(injectProxyInitArgs({ pod }).args).toEqual(byName.get('injected-control-plane')!.args);
  });

  it('proxyInit.iptablesMode legacy: the args of injected-legacy-mode', () => {
    expect(injectProxyInitArgs({ values: { proxyInit: { iptablesMode: 'legacy' } } }).args).toEqual(byName.get('injected-legacy-mode')!.args);
  });
});
