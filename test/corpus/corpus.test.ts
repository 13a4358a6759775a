/**
 * Real rule-set dumps from ../shared/corpus (read at test time, never copied: see the licences in
 * its README; skipped in a clone without it, see test/shared-data.ts) and the kernel-printed
 * vectors of test/fixtures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatIptablesSave } from '../../src/iptables/fmt.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import { describeShared, sharedPath } from '../shared-data.js';

const FIXTURES = join(import.meta.dirname, '../fixtures');
const CORPUS = sharedPath('corpus');

/** Istio's dry-run goldens: drop the recorded save calls, split the IPv4 and IPv6 restore inputs. */
export function splitIstioGolden(text: string): { v4: string; v6: string } {
  const lines = text.split('\n').filter((l) => l !== 'iptables-save' && l !== 'ip6tables-save');
  const seen = new Set<string>();
  let v4 = '';
  let v6 = '';
  let inV6 = false;
  for (const l of lines) {
    const m = /^\*\s*(\w+)/.exec(l);
    if (m) {
      if (seen.has(m[1]!)) inV6 = true;
      seen.add(m[1]!);
    }
    if (l === '') continue;
    if (inV6) v6 += l + '\n';
    else v4 += l + '\n';
  }
  return { v4, v6 };
}

describeShared('the corpus parses and fmt is stable', ['corpus'], () => {
  const corpusFiles = readdirSync(CORPUS).filter((f) => /\.(iptables-save|ip6tables-save|rules|golden|kernel-save)$/.test(f));
  it('has the files it should', () => {
    expect(corpusFiles.length).toBeGreaterThanOrEqual(15);
  });
  it.each(corpusFiles)('%s', (file) => {
    const text = readFileSync(join(CORPUS, file), 'utf8');
    const parts: { text: string; family: 4 | 6 }[] = file.endsWith('.golden')
      ? (() => {
          const { v4, v6 } = splitIstioGolden(text);
          return [{ text: v4, family: 4 as const }, ...(v6 ? [{ text: v6, family: 6 as const }] : [])];
        })()
      : [{ text, family: file.includes('ip6tables') ? 6 : 4 }];
    // kube-proxy's own fixture has unquoted multi-word comments: only its fake parser accepts it.
    // kube-proxy's fixture (unquoted comments) and the parser-stress dump (an unknown option,
    // --something-else) are refused by iptables-restore; lenient mode reads them.
    // The TUM dump's MAC addresses were anonymised to XX:XX:XX:XX:XX:XX, which only lenient mode keeps.
    const strict = !file.endsWith('tracepacket-fixture.rules') && file !== 'iptsemantics_parser-stress.iptables-save' && !file.startsWith('netnetwork_tum');
    for (const p of parts) {
      const r = parseIptablesSave(p.text, { family: p.family, mode: strict ? 'strict' : 'lenient' });
      expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      const once = formatIptablesSave(p.text, { family: p.family, strict });
      expect(formatIptablesSave(once, { family: p.family, strict })).toBe(once);
    }
  });
  it('rejects the parser-stress dump in strict mode on its unknown option, as iptables does', () => {
    const text = readFileSync(join(CORPUS, 'iptsemantics_parser-stress.iptables-save'), 'utf8');
    const d = parseIptablesSave(text, { mode: 'strict' }).diagnostics[0]!;
    expect([d.code, d.token, d.span?.line]).toEqual(['UNKNOWN_OPTION', '--something-else', 12]);
  });
});

describe('the kube-proxy TestTracePacket fixture (test/fixtures/kubernetes)', () => {
  const KUBE = join(FIXTURES, 'kubernetes');
  it('rejects the verbatim kube-proxy fixture in strict mode at line 11, on "health"', () => {
    const text = readFileSync(join(KUBE, 'kube-proxy_tracepacket-fixture.rules'), 'utf8');
    const d = parseIptablesSave(text, { mode: 'strict' }).diagnostics[0]!;
    expect(d.span?.line).toBe(11);
    expect(d.token).toBe('health');
  });
  it('prints the quoted kube-proxy fixture exactly as the kernel-saved one', () => {
    const quoted = readFileSync(join(KUBE, 'kube-proxy_tracepacket-fixture.quoted.rules'), 'utf8');
    const saved = readFileSync(join(KUBE, 'kube-proxy_tracepacket-fixture.kernel-save'), 'utf8');
    expect(formatIptablesSave(quoted)).toBe(saved);
    expect(formatIptablesSave(readFileSync(join(KUBE, 'kube-proxy_tracepacket-fixture.rules'), 'utf8'), { strict: false })).toBe(saved);
  });
});

function listSaves(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listSaves(p));
    else if (/\.save6?$/.test(e.name)) out.push(p);
  }
  return out;
}

describe('kernel-printed vectors print back byte for byte', () => {
  const files = [...listSaves(join(FIXTURES, 'linkerd')), ...listSaves(join(FIXTURES, 'istio/kernel-save'))];
  it('finds them', () => expect(files.length).toBeGreaterThan(60));
  it.each(files.map((f) => [f.slice(FIXTURES.length + 1), f]))('%s', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const family = file.endsWith('.save6') ? 6 : 4;
    expect(formatIptablesSave(text, { family })).toBe(text);
  });
  it('each Istio golden, loaded, prints as the kernel printed it', () => {
    const cases = JSON.parse(readFileSync(join(FIXTURES, 'istio/cases.json'), 'utf8')) as Record<string, { file?: string }>;
    const rejected = JSON.parse(readFileSync(join(FIXTURES, 'istio/kernel-save/rejected.json'), 'utf8')) as Record<string, unknown>;
    let compared = 0;
    for (const [key, c] of Object.entries(cases)) {
      if (key.startsWith('_') || !c.file || key.startsWith('builder/')) continue;
      const golden = readFileSync(join(FIXTURES, 'istio', c.file), 'utf8');
      const { v4, v6 } = splitIstioGolden(golden);
      const saveFile = join(FIXTURES, 'istio/kernel-save', key + '.save');
      if (JSON.stringify(rejected).includes(key)) {
        expect(() => formatIptablesSave(v4) + (v6 ? formatIptablesSave(v6, { family: 6 }) : '')).toThrow();
        continue;
      }
      expect([key, formatIptablesSave(v4)]).toEqual([key, readFileSync(saveFile, 'utf8')]);
      if (v6) expect([key, formatIptablesSave(v6, { family: 6 })]).toEqual([key, readFileSync(saveFile + '6', 'utf8')]);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(30);
  });
});
