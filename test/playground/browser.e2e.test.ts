/// <reference lib="dom" />
/**
 * The playground in a real browser: Debian's Chromium (/usr/bin/chromium, or NETFILTER_SIM_CHROMIUM),
 * driven by playwright-core with no browser download, a fresh profile each run. The page is built
 * (`npm run playground`'s vite build) and served by `netfilter-sim playground --port 0`, the
 * server users run. What the page shows is compared with what the CLI prints for the same input.
 *
 * Without Chromium the suite is skipped with a warning, except under CI=true, where it fails.
 * Screenshots go to playground/dist/screenshots/ (build output, not committed); the figures
 * measured (time to the first trace, to the trace of a 24,000-rule dump, frames meanwhile) are
 * printed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { kubeProxyRules, kubeProxyServices } from '../../bench/kube-proxy.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli/main.js');
const BROWSER = process.env['NETFILTER_SIM_CHROMIUM'] ?? '/usr/bin/chromium';
const SHOTS = join(ROOT, 'playground/dist/screenshots');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const missing = !existsSync(BROWSER) ? `no Chromium at ${BROWSER} (apt-get install chromium)` : !existsSync(CLI) ? 'dist/ is not built (npm run build)' : null;
if (missing !== null && process.env['CI'] === 'true') {
  describe('the playground in Chromium', () => {
    it('runs (CI=true requires it)', () => {
      throw new Error(`cannot run the browser tests: ${missing}`);
    });
  });
} else if (missing !== null) {
  console.warn(`[playground] skipping the browser tests: ${missing}`);
}

const tmp = mkdtempSync(join(tmpdir(), 'nfsim-e2e-'));
const profile = mkdtempSync(join(tmpdir(), 'nfsim-chromium-'));
let server: ChildProcess | null = null;
let origin = '';
let context: BrowserContext;
const foreign: string[] = [];

function cli(args: string[], files: Record<string, string> = {}): { stdout: string; stderr: string } {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(tmp, name), text);
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 256 * 1024 * 1024 });
  return { stdout: r.stdout, stderr: r.stderr };
}

/** The README's linkerd.rules: the lines `$ cat linkerd.rules` prints in the tour. */
function readmeLinkerdRules(): string {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const at = lines.indexOf('$ cat linkerd.rules');
  const end = lines.findIndex((l, i) => i > at && l.startsWith('$ '));
  expect(at).toBeGreaterThan(0);
  return lines.slice(at + 1, end).join('\n') + '\n';
}

async function newPage(width: number, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: 900 });
  await page.emulateMedia({ colorScheme });
  page.on('pageerror', (e) => {
    throw e;
  });
  return page;
}

async function fresh(page: Page, hash = ''): Promise<void> {
  await page.goto(`${origin}/${hash}`);
  await page.waitForFunction(() => document.body.dataset['ready'] === '1');
}

/** Waits for the answer to the job's next request (the page marks each answer on <body>). */
async function answered(page: Page, job: string, after: number): Promise<void> {
  const key = `done${job[0]!.toUpperCase()}${job.slice(1)}`;
  await page.waitForFunction(([k, n]) => Number(document.body.dataset[k as string] ?? '0') > (n as number), [key, after], { timeout: 120_000 });
}

/** Waits until the page has nothing to do: no debounced run, no request in the worker. */
async function idle(page: Page): Promise<void> {
  await page.waitForFunction(() => (window as unknown as { playground: { idle: boolean } }).playground.idle, undefined, { timeout: 120_000 });
}

/** The id of the job's last answer, once the page is idle. */
async function lastAnswer(page: Page, job: string): Promise<number> {
  await idle(page);
  return answerNow(page, job);
}

/** The id of the job's last answer now. */
async function answerNow(page: Page, job: string): Promise<number> {
  const key = `done${job[0]!.toUpperCase()}${job.slice(1)}`;
  return page.evaluate((k) => Number(document.body.dataset[k] ?? '0'), key);
}

async function noHorizontalScroll(page: Page): Promise<void> {
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll).toBeLessThanOrEqual(inner);
}

/** The ★ lines of the CLI's tree. */
function stars(tree: string): string[] {
  return tree.split('\n').filter((l) => l.includes('★')).map((l) => l.slice(l.indexOf('★') + 2).trim());
}

describe.skipIf(missing !== null)('the playground in Chromium', () => {
  beforeAll(async () => {
    const built = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'playground/vite.config.ts'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`the page did not build:\n${built.stdout}\n${built.stderr}`);
    const sizes = JSON.parse(readFileSync(join(ROOT, 'playground/dist/sizes.json'), 'utf8')) as { totalGzip: number; budgetGzip: number };
    console.log(`[playground] the built page: ${(sizes.totalGzip / 1024).toFixed(1)} KiB gzipped (budget ${(sizes.budgetGzip / 1024).toFixed(0)} KiB)`);
    expect(sizes.totalGzip).toBeLessThanOrEqual(sizes.budgetGzip);
    mkdirSync(SHOTS, { recursive: true });
    server = spawn(process.execPath, [CLI, 'playground', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    origin = await new Promise<string>((done, fail) => {
      let out = '';
      server!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /^(http:\/\/127\.0\.0\.1:\d+)\/$/m.exec(out);
        if (m) done(m[1]!);
      });
      server!.once('exit', (code) => fail(new Error(`netfilter-sim playground exited ${code}`)));
    });
    context = await chromium.launchPersistentContext(profile, { executablePath: BROWSER, headless: true, args: ARGS });
    context.on('request', (r) => {
      if (!r.url().startsWith(`${origin}/`) && !r.url().startsWith('data:')) foreign.push(`${r.method()} ${r.url()}`);
    });
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    server?.kill('SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  });

  it('serves the page on 127.0.0.1 only, with GET and HEAD only, and nothing outside its folder', async () => {
    const get = await fetch(`${origin}/`);
    expect(get.status).toBe(200);
    expect(get.headers.get('content-security-policy')).toContain("connect-src 'none'");
    expect((await fetch(`${origin}/`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${origin}/%2e%2e/%2e%2e/package.json`)).status).toBe(404);
    expect((await fetch(`${origin}/no-such-file.js`)).status).toBe(404);
    // A name that points here from elsewhere (DNS rebinding) is refused: only 127.0.0.1 and localhost.
    const status = await new Promise<number>((done, fail) => {
      const u = new URL(origin);
      request({ host: '127.0.0.1', port: u.port, path: '/', headers: { Host: 'evil.example' } }, (res) => { res.resume(); done(res.statusCode ?? 0); }).on('error', fail).end();
    });
    expect(status).toBe(421);
  });

  it("traces the README's Linkerd connection as connect does: outcome, SO_ORIGINAL_DST, the ★ rule and its line", async () => {
    const rules = readmeLinkerdRules();
    const args = ['connect', '--rules', 'linkerd.rules', '--strict', '--listen', '4140,4143,8080', '--uid', '1000', '--dst', '10.96.0.10:80'];
    const json = JSON.parse(cli([...args, '--json'], { 'linkerd.rules': rules }).stdout) as { outcome: string; address: string; port: number; originalDestination: string; source: string };
    const tree = cli(args).stdout;
    const page = await newPage(1280);
    const t0 = Date.now();
    await fresh(page);
    await page.waitForSelector('#results-connect-card');
    const firstTrace = await page.evaluate(() => performance.now());
    console.log(`[playground] page load to the first trace shown: ${Math.round(firstTrace)} ms (wall ${Date.now() - t0} ms)`);
    // Paste the README's rules into an empty editor, set the namespace and the connection.
    await page.fill('#rules', '');
    await page.fill('#rules', rules);
    await page.fill('#ns-listen', '4140,4143,8080');
    await page.check('#conn-local');
    await page.fill('#conn-uid', '1000');
    await page.fill('#conn-dst', '10.96.0.10:80');
    const before = await lastAnswer(page, 'connect');
    await page.click('#form-connect button[type=submit]');
    await answered(page, 'connect', before);
    const card = page.locator('#results-connect-card');
    await expect.poll(() => card.locator('dd').first().textContent()).toBe(json.outcome);
    const cardText = await card.innerText();
    expect(cardText).toContain(`${json.address}:${json.port}`);
    expect(cardText).toContain(json.originalDestination);
    expect(cardText).toContain(json.source);
    expect(json).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140, originalDestination: '10.96.0.10:80' });
    // The deciding rules are the CLI's ★ rules, the first one the REDIRECT.
    const marked = await page.locator('#results-connect ul.outline li.deciding').evaluateAll((els) => els.map((e) => (e.querySelector(':scope > details > summary > span, :scope > span') as HTMLElement).innerText.replace(/^★ /, '')));
    expect(marked).toEqual(stars(tree));
    expect(await page.locator('#results-connect .deciding-rule').innerText()).toBe(stars(tree)[0]);
    expect(stars(tree)[0]).toMatch(/^PROXY_INIT_OUTPUT:4 REDIRECT/);
    // Its line link selects that rule in the editor.
    const line = rules.split('\n').findIndex((l) => l.includes('-j REDIRECT --to-ports 4140')) + 1;
    await page.locator('#results-connect li.deciding button.line').first().click();
    const selected = await page.evaluate(() => {
      const ta = document.getElementById('rules') as HTMLTextAreaElement;
      return { line: ta.value.slice(0, ta.selectionStart).split('\n').length, text: ta.value.slice(ta.selectionStart, ta.selectionEnd) };
    });
    expect(selected).toEqual({ line, text: rules.split('\n')[line - 1] });
    // The command it shows is the one that prints the same.
    expect(await page.locator('#results-connect .command code').innerText()).toBe(`$ netfilter-sim ${args.join(' ').replace('linkerd.rules', 'rules')}`);
    await page.check('#results-connect-view-tree');
    expect(await page.locator('#results-connect pre.out').textContent()).toBe(tree);
    await page.check('#results-connect-view-sequence');
    await page.screenshot({ path: join(SHOTS, 'connect-1280.png'), fullPage: true });
    await page.check('#results-connect-view-outline');
    await page.screenshot({ path: join(SHOTS, 'connect-outline-1280.png') });
    await noHorizontalScroll(page);

    // A shared link reproduces the view: same form, same result, in a new tab.
    await page.click('#share');
    await page.waitForFunction(() => location.hash.startsWith('#s='));
    const link = await page.evaluate(() => location.href);
    const again = await newPage(1280);
    await again.goto(link);
    await again.waitForSelector('#results-connect-card');
    await idle(again);
    expect(await again.inputValue('#rules')).toBe(rules);
    expect(await again.inputValue('#ns-listen')).toBe('4140,4143,8080');
    // On a busy machine the reopened tab may lay out the trace after the card: wait for it.
    await again.waitForSelector('#results-connect ul.outline', { timeout: 120_000 });
    expect(await again.locator('#results-connect-card').innerText()).toBe(cardText);
    expect(await again.locator('#results-connect ul.outline').innerText()).toBe(await page.locator('#results-connect ul.outline').innerText());
    await again.close();
    await page.close();
  });

  it('shows a parse error at the line and column check reports, and goes there', async () => {
    const text = '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m owner --uid-owner 1337 -j REDIRECT --to-ports 15001x\nCOMMIT\n';
    const expected = cli(['check', 'rules'], { rules: text }).stderr;
    expect(expected).toMatch(/^rules:3:67: /);
    const page = await newPage(390);
    await fresh(page);
    const before = await lastAnswer(page, 'check');
    await page.fill('#rules', text);
    await answered(page, 'check', before);
    const item = page.locator('#diagnostics li button').first();
    expect(await item.innerText()).toBe(expected.replace(/\n$/, ''));
    expect(await page.locator('#check-summary').innerText()).toMatch(/^1 error/);
    await item.focus();
    await page.keyboard.press('Enter');
    const caret = await page.evaluate(() => {
      const ta = document.getElementById('rules') as HTMLTextAreaElement;
      const head = ta.value.slice(0, ta.selectionStart).split('\n');
      return { line: head.length, column: head[head.length - 1]!.length + 1, text: ta.value.slice(ta.selectionStart, ta.selectionEnd), focused: document.activeElement === ta };
    });
    expect(caret).toEqual({ line: 3, column: 67, text: '15001x', focused: true });
    await page.screenshot({ path: join(SHOTS, 'error-390.png'), fullPage: true });
    await noHorizontalScroll(page);
    await page.close();
  });

  it('explores with the keyboard alone, and its table has the classes of explore --json', async () => {
    const rules = readFileSync(join(ROOT, 'examples/linkerd-default.rules'), 'utf8');
    const expected = JSON.parse(cli(['explore', '--rules', 'rules', '--strict', '--listen', '4140,4143,8080', '--from', 'local', '-4', '--json'], { rules }).stdout) as { classes: { outcome: string; rules: string[] }[] };
    const page = await newPage(1280, 'dark');
    await fresh(page); // the Linkerd example: these rules and listeners
    expect(await page.inputValue('#rules')).toBe(rules);
    // Tab to the skip link, follow it, then to the tabs; arrows move between them.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-connect');
    const before = await lastAnswer(page, 'explore');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-explore');
    await answered(page, 'explore', before);
    const rows = page.locator('#explore-table tbody tr');
    expect(await rows.count()).toBe(expected.classes.length);
    const outcomes = await rows.evaluateAll((trs) => trs.map((tr) => (tr.children[2] as HTMLElement).innerText));
    expect(outcomes.map((o) => o.split(' ')[0])).toEqual(expected.classes.map((c) => c.outcome));
    const ruleCells = await rows.evaluateAll((trs) => trs.map((tr) => (tr.children[5] as HTMLElement).innerText));
    expect(ruleCells).toEqual(expected.classes.map((c) => c.rules.join('\n')));
    // Sort by outcome from the keyboard: focus its header button and press Enter.
    await page.locator('#explore-table th button').nth(2).focus();
    await page.keyboard.press('Enter');
    expect(await page.locator('#explore-table th').nth(2).getAttribute('aria-sort')).toBe('ascending');
    const sorted = await rows.evaluateAll((trs) => trs.map((tr) => (tr.children[2] as HTMLElement).innerText));
    expect(sorted).toEqual([...outcomes].sort((a, b) => a.localeCompare(b, undefined, { numeric: true })));
    // Filter by typing.
    await page.locator('#explore-filter').focus();
    await page.keyboard.type('refused');
    expect(await rows.count()).toBe(expected.classes.filter((c) => JSON.stringify(c).includes('refused')).length);
    expect(await page.locator('.picture svg rect').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, 'explore-dark-1280.png'), fullPage: true });
    await noHorizontalScroll(page);
    await page.close();
  });

  for (const [example, mesh, client, server] of [['mesh-linkerd', 'linkerd', 'web.yaml', 'api.yaml'], ['mesh-istio', 'istio', 'istio-web.yaml', 'istio-api.yaml'], ['mesh-ambient', 'istio', 'ambient-web.yaml', 'ambient-api.yaml']] as const) {
    it(`mesh ${example}: the verdict and diagnosis of mesh --json`, async () => {
      const files = { 'c.yaml': readFileSync(join(ROOT, 'examples/mesh', client), 'utf8'), 's.yaml': readFileSync(join(ROOT, 'examples/mesh', server), 'utf8') };
      const expected = JSON.parse(cli(['mesh', mesh, '--client', 'c.yaml', '--server', 's.yaml', '--json'], files).stdout) as { verdict: string; diagnosis: string[]; hops: unknown[] };
      const page = await newPage(390);
      await fresh(page);
      await page.click('#tab-mesh');
      const before = await lastAnswer(page, 'mesh');
      await page.selectOption('#mesh-example', example);
      await answered(page, 'mesh', before);
      await expect.poll(() => page.locator('#mesh-card dd').first().innerText()).toBe(expected.verdict);
      expect(await page.locator('#results-mesh ol.hops li').count()).toBe(expected.hops.length);
      const diagnosis = await page.locator('#results-mesh ul.diagnosis li').allInnerTexts();
      expect(diagnosis).toEqual(expected.diagnosis);
      await noHorizontalScroll(page);
      if (example === 'mesh-istio') await page.screenshot({ path: join(SHOTS, 'mesh-390.png'), fullPage: true });
      await page.close();
    });
  }

  it('has no horizontal scrolling at 390 px and 1280 px in any view, light or dark', async () => {
    for (const width of [390, 1280]) {
      const page = await newPage(width, width === 390 ? 'dark' : 'light');
      await fresh(page);
      for (const view of ['connect', 'packet', 'explore', 'mesh', 'compile']) {
        const before = await lastAnswer(page, view);
        await page.click(`#tab-${view}`);
        await answered(page, view, before);
        await noHorizontalScroll(page);
      }
      await page.close();
    }
  });

  it('traces a 24,000-rule dump while the page keeps drawing frames', async () => {
    let services = 2900;
    let rules = kubeProxyRules(kubeProxyServices(services)) as string;
    const count = (t: string): number => t.split('\n').filter((l) => l.startsWith('-A ')).length;
    while (count(rules) < 24_000) rules = kubeProxyRules(kubeProxyServices((services += 100))) as string;
    const n = count(rules);
    const vip = (kubeProxyServices(services) as unknown as { vip: string; port: number; endpoints: string[] }[]).find((s) => s.endpoints.length > 0)!;
    const flags = ['--iface', 'eth0=192.168.0.2/24,192.168.99.11/24', '--iface', 'cbr0=10.0.0.1/8', '--gateway', '192.168.0.1', '--ip-forward', '--route-localnet'];
    const expected = JSON.parse(cli(['connect', '--rules', 'big.rules', '--strict', ...flags, '--from', 'remote', '--src', '10.1.0.7', '--dst', `${vip.vip}:${vip.port}`, '--json'], { 'big.rules': rules }).stdout) as { outcome: string; address: string; port: number };
    const page = await newPage(1280);
    await fresh(page);
    await page.fill('#ns-listen', '');
    await page.fill('#ns-ifaces', 'eth0=192.168.0.2/24,192.168.99.11/24\ncbr0=10.0.0.1/8');
    await page.fill('#ns-gateway', '192.168.0.1');
    await page.check('#ns-forward');
    await page.check('#ns-localnet');
    await page.check('#conn-remote');
    await page.fill('#conn-src', '10.1.0.7');
    await page.fill('#conn-dst', `${vip.vip}:${vip.port}`);
    // Paste: the editor's text replaced at once, as a paste does; the page lays the text out once,
    // then checks it and runs the connection again (in the worker), as after any change.
    await idle(page);
    const checked = await answerNow(page, 'check');
    const before = await answerNow(page, 'connect');
    const paste = await page.evaluate(async (text) => {
      const ta = document.getElementById('rules') as HTMLTextAreaElement;
      const t = performance.now();
      ta.value = text;
      ta.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      return performance.now() - t;
    }, rules);
    // From here to the trace shown, a frame counter runs on the page's thread.
    const t0 = await page.evaluate(() => {
      const w = window as unknown as { frames_: number; gaps_: number[] };
      w.frames_ = 0;
      w.gaps_ = [];
      let last = performance.now();
      const tick = (t: number): void => {
        w.frames_++;
        w.gaps_.push(t - last);
        last = t;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      return performance.now();
    });
    await answered(page, 'check', checked);
    await answered(page, 'connect', before);
    await page.waitForSelector('#results-connect-card');
    const t1 = await page.evaluate(() => new Promise<number>((done) => requestAnimationFrame(() => done(performance.now()))));
    const { frames, worst, timings } = await page.evaluate(() => {
      const w = window as unknown as { frames_: number; gaps_: number[]; playground: { timings: Record<string, number> } };
      return { frames: w.frames_, worst: Math.max(...w.gaps_), timings: w.playground.timings };
    });
    console.log(`[playground] ${n} rules (${(rules.length / 1e6).toFixed(1)} MB): paste laid out in ${Math.round(paste)} ms; then checked and traced in ${Math.round(t1 - t0)} ms (worker: check ${Math.round(timings['check'] ?? 0)} ms, connect ${Math.round(timings['connect'] ?? 0)} ms); ${frames} frames meanwhile, longest gap ${Math.round(worst)} ms`);
    expect(n).toBeGreaterThanOrEqual(24_000);
    const card = await page.locator('#results-connect-card').innerText();
    expect(card).toContain(expected.outcome);
    expect(card).toContain(`${expected.address}:${expected.port}`);
    // The main thread kept drawing: frames came all along, and no pause took a large share of
    // the wait (parsing on the page's thread would stop the frames for most of it). Relative to
    // the wait, so that a busy machine slows both alike.
    expect(frames).toBeGreaterThan(10);
    expect(worst).toBeLessThan(Math.max(500, (t1 - t0) / 2));
    expect(await page.locator('#check-summary').innerText()).toContain(`ok (${n} rules`);
    await page.close();
  });

  it('sent nothing anywhere but its own server', () => {
    expect(foreign).toEqual([]);
  });
});
