// Renderers are pure functions of the events.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import { renderTrace, renderTraceDot, renderTraceJson, renderTraceMermaid, renderTraceText, renderTraceTree } from '../../src/trace/render.js';
import { fixture } from '../engine/helpers.js';

const ns = () => new Netns({ rules: fixture('linkerd/injected-default.save'), listen: [4140, 4143] });
const trace = () => ns().connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }).trace!;

describe('renderers', () => {
  it('text: kernel TRACE lines, table:chain:type:N', () => {
    const lines = renderTraceText(trace()).split('\n').filter((l) => l.startsWith('TRACE:'));
    expect(lines[0]).toMatch(/^TRACE: nat:OUTPUT:rule:1 SYN OUTPUT -j PROXY_INIT_OUTPUT/);
    expect(lines[1]).toMatch(/^TRACE: nat:PROXY_INIT_OUTPUT:rule:4 SYN OUTPUT -j REDIRECT/);
    expect(lines[2]).toMatch(/^TRACE: nat:POSTROUTING:policy:1 SYN POSTROUTING ACCEPT/);
  });

  it('tree: hooks at the top, jumps indented, the deciding rule marked', () => {
    const out = renderTraceTree(trace());
    const lines = out.split('\n');
    const jump = lines.find((l) => l.includes('OUTPUT:1 → PROXY_INIT_OUTPUT'))!;
    const redirect = lines.find((l) => l.includes('PROXY_INIT_OUTPUT:4 REDIRECT'))!;
    expect(jump).toMatch(/^\s+OUTPUT\s+nat\s+OUTPUT:1/);
    expect(redirect.indexOf('PROXY_INIT_OUTPUT:4')).toBeGreaterThan(jump.indexOf('OUTPUT:1'));
    expect(redirect).toContain('★');
    expect(out).toMatch(/^SYN-ACK /m);
    expect(out).toMatch(/^ACK /m);
  });

  it('json: the events verbatim', () => {
    const t = trace();
    expect(JSON.parse(renderTraceJson(t))).toEqual(JSON.parse(JSON.stringify(t)));
  });

  it('mermaid and dot: a graph of the visited chains', () => {
    const m = renderTraceMermaid(trace());
    expect(m.startsWith('flowchart LR\n')).toBe(true);
    expect(m).toContain('-->|"PROXY_INIT_OUTPUT:4 REDIRECT"|');
    const d = renderTraceDot(trace());
    expect(d.startsWith('digraph trace {')).toBe(true);
    expect(d).toContain('label="PROXY_INIT_OUTPUT:4 REDIRECT"');
    expect(d.trim().endsWith('}')).toBe(true);
  });

  it('colour only when asked', () => {
    const t = trace();
    expect(renderTraceTree(t)).not.toMatch(/\u001b\[/);
    expect(renderTraceTree(t, { color: true })).toMatch(/\u001b\[/);
    expect(renderTrace(t, 'text', { color: false })).toBe(renderTraceText(t));
  });
});
