// The page: the form is the state, the worker computes, this file shows. Every change is kept in
// the URL fragment, so the address bar is always a link to this view.
import './style.css';
import { decodeState, encodeState } from './codec.js';
import { EXAMPLES } from './examples.js';
import type { Answer, Job, Request } from './worker.js';
import { DEFAULT_STATE, MAX_FIELD_CHARS, normalizeState, type PlaygroundState, type PlaygroundView } from '../../src/playground/state.js';
import type { CheckView, CompileView, ExploreView, MeshView, PlaygroundDiagnostic, PlaygroundFailure, TraceView } from '../../src/playground/run.js';
import type { OutlineNode } from '../../src/trace/outline.js';
import type { SequenceDiagram } from '../../src/playground/sequence.js';
import type { ExploreClass } from '../../src/explore/explore.js';

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`no #${id}`);
  return el as T;
};

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string | null)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) if (c !== null) el.append(c);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

let state: PlaygroundState = DEFAULT_STATE;

// ---------------------------------------------------------------------------------------------
// The worker: one request in flight per job; a newer request for a job replaces a waiting one.

const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
let nextId = 1;
const inFlight = new Map<Job, number>();
const waiting = new Map<Job, PlaygroundState>();
const handlers = new Map<Job, (value: unknown, ms: number) => void>();
/** What the page has done, for the tests and for anyone curious: the last answer of each job. */
const timings: Record<string, number> = {};

function ask(job: Job, st: PlaygroundState): void {
  if (inFlight.has(job)) {
    waiting.set(job, st);
    return;
  }
  const id = nextId++;
  inFlight.set(job, id);
  const req: Request = { id, job, state: st };
  worker.postMessage(req);
}

// A worker that dies (out of memory on a huge input, a bug) is said so where the answer was awaited.
worker.onerror = (e: ErrorEvent): void => {
  const jobs = [...inFlight.keys()];
  inFlight.clear();
  waiting.clear();
  for (const job of jobs) {
    const into = job === 'check' ? $('check-summary') : $(`results-${job}`);
    into.removeAttribute('aria-busy');
    into.replaceChildren(h('p', { class: 'summary bad', role: 'alert' }, `The simulator stopped: ${e.message || 'the worker failed'}. Reload the page to start it again.`));
  }
};

worker.onmessage = (e: MessageEvent<Answer>): void => {
  const { id, job, ms, value } = e.data;
  if (inFlight.get(job) === id) inFlight.delete(job);
  const next = waiting.get(job);
  if (next) {
    waiting.delete(job);
    ask(job, next);
    return; // a newer request is on its way: this answer is stale
  }
  timings[job] = ms;
  document.body.dataset[`done${job[0]!.toUpperCase()}${job.slice(1)}`] = String(id);
  handlers.get(job)?.(value, ms);
};

// ---------------------------------------------------------------------------------------------
// State ↔ form.

type Field = { id: string; get: (st: PlaygroundState) => string | boolean; set: (st: PlaygroundState, v: string | boolean) => PlaygroundState; rules?: boolean };

const text = (id: string, get: (st: PlaygroundState) => string, set: (st: PlaygroundState, v: string) => PlaygroundState, rules = false): Field => ({ id, get, set: (st, v) => set(st, String(v)), rules });
const flag = (id: string, get: (st: PlaygroundState) => boolean, set: (st: PlaygroundState, v: boolean) => PlaygroundState, rules = false): Field => ({ id, get, set: (st, v) => set(st, v === true), rules });

const FIELDS: Field[] = [
  text('rules', (t) => t.rules, (t, v) => ({ ...t, rules: v }), true),
  text('syntax', (t) => t.syntax, (t, v) => ({ ...t, syntax: v as PlaygroundState['syntax'] }), true),
  flag('strict', (t) => t.strict, (t, v) => ({ ...t, strict: v }), true),
  text('ns-listen', (t) => t.ns.listen, (t, v) => ({ ...t, ns: { ...t.ns, listen: v } })),
  text('ns-ifaces', (t) => t.ns.ifaces, (t, v) => ({ ...t, ns: { ...t.ns, ifaces: v } })),
  text('ns-gateway', (t) => t.ns.gateway, (t, v) => ({ ...t, ns: { ...t.ns, gateway: v } })),
  text('ns-routes', (t) => t.ns.routes, (t, v) => ({ ...t, ns: { ...t.ns, routes: v } })),
  text('ns-rules', (t) => t.ns.ipRules, (t, v) => ({ ...t, ns: { ...t.ns, ipRules: v } })),
  flag('ns-localnet', (t) => t.ns.routeLocalnet, (t, v) => ({ ...t, ns: { ...t.ns, routeLocalnet: v } })),
  flag('ns-forward', (t) => t.ns.ipForward, (t, v) => ({ ...t, ns: { ...t.ns, ipForward: v } })),
  text('conn-uid', (t) => t.conn.uid, (t, v) => ({ ...t, conn: { ...t.conn, uid: v } })),
  text('conn-gid', (t) => t.conn.gid, (t, v) => ({ ...t, conn: { ...t.conn, gid: v } })),
  text('conn-src', (t) => t.conn.src, (t, v) => ({ ...t, conn: { ...t.conn, src: v } })),
  text('conn-iface', (t) => t.conn.iface, (t, v) => ({ ...t, conn: { ...t.conn, iface: v } })),
  text('conn-mark', (t) => t.conn.mark, (t, v) => ({ ...t, conn: { ...t.conn, mark: v } })),
  text('conn-sport', (t) => t.conn.sport, (t, v) => ({ ...t, conn: { ...t.conn, sport: v } })),
  text('conn-dst', (t) => t.conn.dst, (t, v) => ({ ...t, conn: { ...t.conn, dst: v } })),
  text('conn-proto', (t) => t.conn.proto, (t, v) => ({ ...t, conn: { ...t.conn, proto: v === 'udp' ? 'udp' : 'tcp' } })),
  text('packet', (t) => t.packet, (t, v) => ({ ...t, packet: v })),
  text('explore-from', (t) => t.explore.from, (t, v) => ({ ...t, explore: { ...t.explore, from: v === 'remote' ? 'remote' : 'local' } })),
  text('explore-proto', (t) => t.explore.proto, (t, v) => ({ ...t, explore: { ...t.explore, proto: v === 'udp' ? 'udp' : 'tcp' } })),
  text('explore-family', (t) => t.explore.family, (t, v) => ({ ...t, explore: { ...t.explore, family: v as PlaygroundState['explore']['family'] } })),
  text('mesh-mesh', (t) => t.mesh.mesh, (t, v) => ({ ...t, mesh: { ...t.mesh, mesh: v === 'istio' ? 'istio' : 'linkerd' } })),
  text('mesh-dst', (t) => t.mesh.dst, (t, v) => ({ ...t, mesh: { ...t.mesh, dst: v } })),
  text('mesh-phase', (t) => t.mesh.phase, (t, v) => ({ ...t, mesh: { ...t.mesh, phase: v } })),
  text('mesh-native', (t) => t.mesh.nativeSidecars, (t, v) => ({ ...t, mesh: { ...t.mesh, nativeSidecars: v as PlaygroundState['mesh']['nativeSidecars'] } })),
  flag('mesh-cni', (t) => t.mesh.cni, (t, v) => ({ ...t, mesh: { ...t.mesh, cni: v } })),
  flag('mesh-ambient', (t) => t.mesh.ambient, (t, v) => ({ ...t, mesh: { ...t.mesh, ambient: v } })),
  text('mesh-client', (t) => t.mesh.client, (t, v) => ({ ...t, mesh: { ...t.mesh, client: v } })),
  text('mesh-server', (t) => t.mesh.server, (t, v) => ({ ...t, mesh: { ...t.mesh, server: v } })),
  text('compile-mesh', (t) => t.compile.mesh, (t, v) => ({ ...t, compile: { ...t.compile, mesh: v === 'istio' ? 'istio' : 'linkerd' } })),
  text('compile-input', (t) => t.compile.input, (t, v) => ({ ...t, compile: { ...t.compile, input: v === 'pod' ? 'pod' : 'flags' } })),
  text('compile-format', (t) => t.compile.format, (t, v) => ({ ...t, compile: { ...t.compile, format: v as PlaygroundState['compile']['format'] } })),
  text('compile-flags', (t) => t.compile.flags, (t, v) => ({ ...t, compile: { ...t.compile, flags: v } })),
  text('compile-pod', (t) => t.compile.pod, (t, v) => ({ ...t, compile: { ...t.compile, pod: v } })),
];

function fillForm(): void {
  for (const f of FIELDS) {
    const el = $<HTMLInputElement>(f.id);
    const v = f.get(state);
    if (typeof v === 'boolean') el.checked = v;
    else if (el.value !== v) el.value = v;
  }
  $<HTMLInputElement>(state.conn.from === 'remote' ? 'conn-remote' : 'conn-local').checked = true;
  showConditional();
  selectTab(state.view, false);
  renderGutter();
}

function showConditional(): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-local]')) el.hidden = state.conn.from !== 'local';
  for (const el of document.querySelectorAll<HTMLElement>('[data-remote]')) el.hidden = state.conn.from !== 'remote';
  for (const el of document.querySelectorAll<HTMLElement>('[data-flags]')) el.hidden = state.compile.input !== 'flags';
  for (const el of document.querySelectorAll<HTMLElement>('[data-pod]')) el.hidden = state.compile.input !== 'pod';
}

function bindForm(): void {
  for (const f of FIELDS) {
    const el = $<HTMLInputElement>(f.id);
    const on = (): void => {
      state = f.set(state, el.type === 'checkbox' ? el.checked : el.value);
      changed(f.rules === true);
    };
    el.addEventListener(el.tagName === 'SELECT' || el.type === 'checkbox' ? 'change' : 'input', on);
  }
  for (const id of ['conn-local', 'conn-remote']) {
    $<HTMLInputElement>(id).addEventListener('change', (e) => {
      state = { ...state, conn: { ...state.conn, from: (e.target as HTMLInputElement).value === 'remote' ? 'remote' : 'local' } };
      showConditional();
      changed(false);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The URL fragment.

let hashTimer = 0;
let lastHash = '';

async function writeHash(): Promise<string> {
  const fragment = await encodeState(state);
  lastHash = `#${fragment}`;
  if (location.hash !== lastHash) history.replaceState(null, '', lastHash);
  document.body.dataset['hash'] = String(lastHash.length);
  return lastHash;
}

async function readHash(): Promise<boolean> {
  if (location.hash === '' || location.hash === lastHash) return false;
  try {
    const decoded = await decodeState(location.hash, MAX_FIELD_CHARS * 4);
    if (decoded === null) return false;
    state = normalizeState(decoded);
    lastHash = location.hash;
    return true;
  } catch (e) {
    $('share-status').textContent = `This link is damaged (${e instanceof Error ? e.message : String(e)}); showing the default view.`;
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Changes: the fragment follows, the rules are checked, the current view runs again.

let checkTimer = 0;
let runTimer = 0;
let runPending = 0;
let checkPending = 0;

function changed(rules: boolean): void {
  window.clearTimeout(hashTimer);
  hashTimer = window.setTimeout(() => void writeHash(), 400);
  if (rules) {
    window.clearTimeout(checkTimer);
    checkPending = 1;
    checkTimer = window.setTimeout(() => {
      checkPending = 0;
      ask('check', state);
    }, 250);
    renderGutter();
  }
  window.clearTimeout(runTimer);
  runPending = 1;
  runTimer = window.setTimeout(() => run(), 500);
}

function run(view: PlaygroundView = state.view): void {
  window.clearTimeout(runTimer);
  runPending = 0;
  const results = $(`results-${view}`);
  if (!results.firstChild) results.append(h('p', { class: 'busy' }, 'Working…'));
  else results.setAttribute('aria-busy', 'true');
  ask(view, state);
}

// ---------------------------------------------------------------------------------------------
// The rules editor: line numbers, marks for diagnostics and the linked rule, going to a line.

const editor = (): HTMLTextAreaElement => $<HTMLTextAreaElement>('rules');
const LINE_PX = 19;
let gutterLines = -1;
let marks: { line: number; kind: string }[] = [];

function renderGutter(): void {
  const t = editor().value;
  let n = 1;
  for (let i = t.indexOf('\n'); i >= 0; i = t.indexOf('\n', i + 1)) n++;
  if (n !== gutterLines) {
    gutterLines = n;
    const parts: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) parts[i] = String(i + 1);
    $('gutter-inner').textContent = parts.join('\n');
  }
  syncScroll();
}

function renderMarks(): void {
  const inner = $('marks-inner');
  inner.replaceChildren(...marks.map((m) => h('div', { class: `mark ${m.kind}`, style: `top:${(m.line - 1) * LINE_PX + 5}px` })));
  syncScroll();
}

function syncScroll(): void {
  const ta = editor();
  $('gutter-inner').style.transform = `translateY(${-ta.scrollTop}px)`;
  $('marks-inner').style.transform = `translate(${-ta.scrollLeft}px, ${-ta.scrollTop}px)`;
}

/** Selects line LINE (from COLUMN, LENGTH characters, or the whole line) and scrolls it into view. */
function goToLine(line: number, column?: number | null, length?: number): void {
  const ta = editor();
  const t = ta.value;
  let start = 0;
  for (let l = 1; l < line; l++) {
    const nl = t.indexOf('\n', start);
    if (nl < 0) break;
    start = nl + 1;
  }
  const end = t.indexOf('\n', start) < 0 ? t.length : t.indexOf('\n', start);
  const from = column ? Math.min(start + column - 1, end) : start;
  const to = column ? Math.min(from + Math.max(length ?? 0, 1), end) : end;
  ta.focus();
  ta.setSelectionRange(from, to);
  ta.scrollTop = Math.max(0, (line - 1) * LINE_PX - ta.clientHeight / 3);
  marks = marks.filter((m) => m.kind !== 'linked').concat({ line, kind: 'linked' });
  renderMarks();
}

function showCheck(v: CheckView): void {
  const summary = $('check-summary');
  const detected = state.syntax === 'auto' ? ` (read as ${v.syntax === 'nft' ? 'nft' : 'iptables-save'})` : '';
  summary.textContent = state.rules.trim() === '' ? 'No rules: the namespace has none (every policy ACCEPT).' : `${v.summary}${detected}`;
  summary.className = `summary ${v.ok ? 'ok' : 'bad'}`;
  const list = $('diagnostics');
  list.replaceChildren(...v.diagnostics.map((d) => diagnosticItem(d)));
  marks = v.diagnostics.filter((d) => d.line !== null).map((d) => ({ line: d.line!, kind: d.severity }));
  renderMarks();
}

function diagnosticItem(d: PlaygroundDiagnostic, inRules = true): HTMLLIElement {
  const pre = h('pre', {}, d.text);
  if (!inRules || d.line === null) return h('li', { class: d.severity }, pre);
  const b = h('button', { type: 'button', 'data-line': String(d.line), 'data-column': String(d.column ?? ''), 'aria-label': `Go to line ${d.line}, column ${d.column}: ${d.message}` }, pre);
  b.addEventListener('click', () => goToLine(d.line!, d.column, d.length));
  return h('li', { class: d.severity }, b);
}

// ---------------------------------------------------------------------------------------------
// Tabs.

const VIEW_IDS: readonly PlaygroundView[] = ['connect', 'packet', 'explore', 'mesh', 'compile'];

function selectTab(view: PlaygroundView, focus: boolean): void {
  for (const v of VIEW_IDS) {
    const tab = $(`tab-${v}`);
    const on = v === view;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`panel-${v}`).hidden = !on;
    if (on && focus) tab.focus();
  }
}

function bindTabs(): void {
  for (const v of VIEW_IDS) {
    const tab = $(`tab-${v}`);
    tab.addEventListener('click', () => {
      state = { ...state, view: v };
      selectTab(v, false);
      changed(false);
      run(v);
    });
    tab.addEventListener('keydown', (e) => {
      const i = VIEW_IDS.indexOf(v);
      const to = e.key === 'ArrowRight' ? VIEW_IDS[(i + 1) % VIEW_IDS.length] : e.key === 'ArrowLeft' ? VIEW_IDS[(i + VIEW_IDS.length - 1) % VIEW_IDS.length] : e.key === 'Home' ? VIEW_IDS[0] : e.key === 'End' ? VIEW_IDS[VIEW_IDS.length - 1] : undefined;
      if (!to) return;
      e.preventDefault();
      state = { ...state, view: to };
      selectTab(to, true);
      changed(false);
      run(to);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Results.

function failed(value: unknown): value is PlaygroundFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false && Array.isArray((value as { diagnostics?: unknown }).diagnostics);
}

function showFailure(into: HTMLElement, f: PlaygroundFailure): void {
  into.removeAttribute('aria-busy');
  const inRules = f.source === 'rules';
  into.replaceChildren(
    h('p', { class: 'summary bad', role: 'alert' }, inRules ? 'The rules do not load:' : `Error in ${f.source}:`),
    h('ul', { class: 'diagnostics' }, ...f.diagnostics.map((d) => diagnosticItem(d, inRules))),
  );
}

function commandLine(command: string): HTMLElement {
  const b = h('button', { type: 'button', 'aria-label': 'Copy the command' }, 'Copy');
  b.addEventListener('click', () => void copy(command, b));
  return h('div', { class: 'command' }, h('code', { 'aria-label': 'The same from the command line' }, `$ ${command}`), b);
}

async function copy(textToCopy: string, button: HTMLButtonElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(textToCopy);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Select and copy';
  }
  window.setTimeout(() => (button.textContent = 'Copy'), 1500);
}

function row(dl: HTMLElement, term: string, value: Node | string, cls = ''): void {
  dl.append(h('dt', {}, term), h('dd', cls ? { class: cls } : {}, value));
}

const TRACE_VIEWS: readonly [PlaygroundState['traceView'], string][] = [
  ['outline', 'Tree'],
  ['sequence', 'Sequence'],
  ['tree', 'CLI tree'],
  ['text', 'TRACE lines'],
  ['mermaid', 'Mermaid'],
  ['dot', 'DOT'],
  ['json', 'JSON events'],
];

function showTrace(into: HTMLElement, v: TraceView | PlaygroundFailure): void {
  if (failed(v)) return showFailure(into, v);
  into.removeAttribute('aria-busy');
  const r = v.result;
  const card = h('dl', { class: 'card', id: `${into.id}-card` });
  row(card, 'outcome', r.outcome, `outcome-${r.outcome}`);
  if (r.address !== null) row(card, r.outcome === 'local' ? 'delivered to' : 'left for', `${r.address.includes(':') ? `[${r.address}]` : r.address}${r.port !== null ? `:${r.port}` : ''}`);
  if (r.originalDestination !== null) row(card, 'SO_ORIGINAL_DST', r.originalDestination);
  if (v.sequence.initiator !== '') row(card, 'sender’s source', v.sequence.initiator);
  if (r.source !== null) row(card, r.outcome === 'local' ? 'accepting socket sees' : 'peer sees', r.source);
  row(card, 'why', r.reason);
  if (r.error) row(card, 'errno', r.error);
  const deciding: OutlineNode[] = [];
  const walk = (ns: readonly OutlineNode[]): void => ns.forEach((n) => { if (n.deciding) deciding.push(n); walk(n.children); });
  walk(v.outline);
  const first = deciding.find((n) => n.kind === 'rule');
  if (first) row(card, 'deciding rule', first.text, 'deciding-rule');
  const views = h('div', { class: 'views', role: 'radiogroup', 'aria-label': 'Show the trace as' });
  const body = h('div', { class: 'trace-body' });
  for (const [key, label] of TRACE_VIEWS) {
    const id = `${into.id}-view-${key}`;
    const input = h('input', { type: 'radio', name: `${into.id}-view`, id, value: key });
    input.checked = state.traceView === key;
    input.addEventListener('change', () => {
      state = { ...state, traceView: key };
      changed(false);
      window.clearTimeout(runTimer);
      runPending = 0;
      renderTraceBody(body, v);
    });
    views.append(h('label', { class: 'check', for: id }, input, label));
  }
  const warnings = v.warnings.length ? h('details', { class: 'warnings' }, h('summary', {}, `${v.warnings.length} warning${v.warnings.length === 1 ? '' : 's'} from the rules`), h('pre', { class: 'out' }, v.warnings.join('\n'))) : null;
  into.replaceChildren(card, commandLine(v.command), warnings ?? '', views, body);
  renderTraceBody(body, v);
}

function renderTraceBody(body: HTMLElement, v: TraceView): void {
  switch (state.traceView) {
    case 'outline':
      body.replaceChildren(h('ul', { class: 'outline', 'aria-label': 'The trace: packets, hooks, tables, rules' }, ...v.outline.map(outlineItem)));
      break;
    case 'sequence':
      body.replaceChildren(sequenceDiagram(v.sequence));
      break;
    default: {
      const txt = state.traceView === 'tree' ? v.tree + v.outcome : state.traceView === 'text' ? v.text : state.traceView === 'mermaid' ? v.mermaid : state.traceView === 'dot' ? v.dot : v.json;
      body.replaceChildren(h('pre', { class: 'out', tabindex: '0', 'aria-label': `The trace as ${state.traceView}` }, txt));
    }
  }
}

function outlineItem(n: OutlineNode): HTMLLIElement {
  const label = h('span', {}, `${n.deciding ? '★ ' : ''}${n.text}`);
  const link = n.span ? lineButton(n.span.line) : null;
  const ruleText = n.rule && n.deciding ? h('code', { class: 'rule-text' }, n.rule) : null;
  const cls = `k-${n.kind}${n.deciding ? ' deciding' : ''}`;
  if (n.children.length === 0) return h('li', { class: cls }, label, link ?? '', ruleText ?? '');
  const d = h('details', { open: '' }, h('summary', {}, label, link ?? ''), ruleText ?? '', h('ul', {}, ...n.children.map(outlineItem)));
  return h('li', { class: cls }, d);
}

function lineButton(line: number): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'line', 'data-line': String(line), 'aria-label': `Show rule at line ${line} in the editor` }, `line ${line}`);
  b.addEventListener('click', (e) => {
    e.preventDefault();
    e.stopPropagation();
    goToLine(line);
  });
  return b;
}

function sequenceDiagram(d: SequenceDiagram): HTMLElement {
  const lanes = [d.initiator, ...d.hooks, d.responder];
  const colW = 150;
  const left = 20;
  const x = (i: number): number => left + i * colW + colW / 2;
  const width = left * 2 + lanes.length * colW;
  const lineH = 15;
  let y = 46;
  const svg = s('svg', { role: 'img', 'aria-labelledby': 'seq-title', width, viewBox: `0 0 ${width} 100` });
  svg.append(s('title', { id: 'seq-title' }, `Sequence of ${d.messages.length} packets between ${d.initiator} and ${d.responder}`));
  const body = s('g');
  for (const m of d.messages) {
    const fromLane = m.from === 'initiator' ? 0 : lanes.length - 1;
    const toLane = m.end === 'dropped' || m.end === 'none' ? lastHookLane(m.hooks, lanes, fromLane) : m.from === 'initiator' ? lanes.length - 1 : 0;
    body.append(s('text', { x: Math.min(x(fromLane), x(toLane)), y, 'font-weight': 700 }, m.label));
    y += 8;
    const cls = `arrow ${m.end}`;
    body.append(s('line', { x1: x(fromLane), y1: y, x2: x(toLane), y2: y, class: cls }));
    const dir = toLane >= fromLane ? -1 : 1;
    body.append(s('path', { d: `M ${x(toLane)} ${y} l ${dir * 8} -4 l 0 8 z`, class: 'dot' }));
    for (const hk of m.hooks) {
      const i = lanes.indexOf(hk, 1);
      if (i > 0 && i < lanes.length - 1) body.append(s('circle', { cx: x(i), cy: y, r: 3.5, class: 'dot' }));
    }
    y += lineH;
    for (const n of m.notes) {
      body.append(s('text', { x: x(0) + 6, y, class: `note${n.deciding ? ' deciding' : ''}` }, `${n.deciding ? '★ ' : ''}${n.at}: ${n.text}`));
      y += lineH - 2;
    }
    body.append(s('text', { x: x(0) + 6, y, class: `note` }, m.endText || '(no further step)'));
    y += lineH + 10;
  }
  const height = y;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('height', String(height));
  lanes.forEach((name, i) => {
    svg.append(s('line', { x1: x(i), y1: 26, x2: x(i), y2: height - 4, class: 'lifeline' }));
    const g = s('g', { class: 'head' });
    g.append(s('rect', { x: x(i) - colW / 2 + 6, y: 4, width: colW - 12, height: 22, rx: 3 }));
    g.append(s('text', { x: x(i), y: 19, 'text-anchor': 'middle' }, name.length > 22 ? `${name.slice(0, 21)}…` : name));
    g.append(s('title', {}, name));
    svg.append(g);
  });
  svg.append(body);
  return h('div', { class: 'seq', tabindex: '0', 'aria-label': 'Sequence diagram (scrolls sideways)' }, svg);
}

function lastHookLane(hooks: readonly string[], lanes: readonly string[], fallback: number): number {
  const last = hooks[hooks.length - 1];
  const i = last === undefined ? -1 : lanes.indexOf(last, 1);
  return i > 0 ? i : fallback;
}

// ---------------------------------------------------------------------------------------------
// Explore: the classes as a table, and a picture of ports × addresses for one uid.

const PALETTE = ['#2f7ed8', '#8bbc21', '#e4a100', '#910000', '#1aadce', '#492970', '#f28f43', '#77a1e5', '#c42525', '#a6c96a', '#5c5c61', '#d96ad1'];

function classLabel(c: ExploreClass): string {
  const at = c.address === null ? '' : ` ${c.address === 'dst' ? '(dst)' : c.address}${c.port === null ? '' : `:${c.port === 'dport' ? '(dport)' : c.port}`}`;
  return `${c.outcome}${at}`;
}

function boxText(b: Record<string, unknown>): string {
  return Object.entries(b).map(([k, v]) => `${k} ${Array.isArray(v) ? (v[0] === v[1] ? String(v[0]) : `${String(v[0])}–${String(v[1])}`) : String(v)}`).join(', ');
}

function showExplore(into: HTMLElement, v: ExploreView | PlaygroundFailure): void {
  if (failed(v)) return showFailure(into, v);
  into.removeAttribute('aria-busy');
  const classes = v.result.classes;
  const colour = (i: number): string => PALETTE[i % PALETTE.length]!;
  const filter = h('input', { id: 'explore-filter', type: 'search', placeholder: 'filter: outcome, address, rule…', 'aria-label': 'Filter the classes' });
  filter.value = state.explore.filter;
  const table = h('table', { id: 'explore-table' });
  const cols: [string, string, (c: ExploreClass, i: number) => string][] = [
    ['#', 'index', (_c, i) => String(i + 1)],
    ['family', 'family', (c) => `IPv${c.family}`],
    ['outcome', 'outcome', (c) => classLabel(c)],
    ['SO_ORIGINAL_DST', 'original', (c) => c.originalDestination ?? ''],
    ['probes', 'boxes', (c) => c.boxes.map((b) => boxText(b as Record<string, unknown>)).join('; ')],
    ['rules', 'rules', (c) => c.rules.join('\n')],
  ];
  const head = h('tr');
  const body = h('tbody');
  const draw = (): void => {
    const [sortKey, dir] = (state.explore.sort || 'index:asc').split(':') as [string, string];
    const col = cols.find((c) => c[1] === sortKey) ?? cols[0]!;
    const needle = state.explore.filter.trim().toLowerCase();
    const rowsData = classes.map((c, i) => ({ c, i })).filter(({ c, i }) => needle === '' || cols.some(([, , f]) => f(c, i).toLowerCase().includes(needle)));
    rowsData.sort((a, b) => {
      const x = col[2](a.c, a.i);
      const y = col[2](b.c, b.i);
      const n = col[1] === 'index' ? a.i - b.i : x.localeCompare(y, undefined, { numeric: true });
      return dir === 'desc' ? -n : n;
    });
    head.replaceChildren(...cols.map(([title, key]) => {
      const sorted = sortKey === key;
      const b = h('button', { type: 'button' }, `${title}${sorted ? (dir === 'desc' ? ' ▼' : ' ▲') : ''}`);
      b.addEventListener('click', () => {
        state = { ...state, explore: { ...state.explore, sort: `${key}:${sorted && dir === 'asc' ? 'desc' : 'asc'}` } };
        changed(false);
        window.clearTimeout(runTimer);
        runPending = 0;
        draw();
        (head.querySelectorAll('button')[cols.findIndex((c) => c[1] === key)] as HTMLButtonElement).focus();
      });
      return h('th', { scope: 'col', 'aria-sort': sorted ? (dir === 'desc' ? 'descending' : 'ascending') : 'none' }, b);
    }));
    body.replaceChildren(...rowsData.map(({ c, i }) => h('tr', {}, ...cols.map(([, key, f]) => {
      const cell = f(c, i);
      if (key === 'index') return h('td', {}, h('span', { class: 'swatch', style: `background:${colour(i)}` }), cell);
      return h('td', {}, key === 'rules' || key === 'boxes' ? h('code', {}, cell) : cell);
    }))));
    count.textContent = `${rowsData.length} of ${classes.length} classes (${v.result.regions} regions run)`;
  };
  const count = h('p', { role: 'status', class: 'summary' });
  filter.addEventListener('input', () => {
    state = { ...state, explore: { ...state.explore, filter: filter.value } };
    changed(false);
    window.clearTimeout(runTimer);
    runPending = 0;
    draw();
  });
  table.append(h('thead', {}, head), body);
  draw();
  const uidInput = h('input', { id: 'explore-uid', inputmode: 'numeric', size: '8', value: state.explore.uid });
  const picture = h('div', { class: 'picture' });
  const drawPicture = (): void => picture.replaceChildren(explorePicture(v, Number(state.explore.uid || '0'), colour));
  uidInput.addEventListener('input', () => {
    state = { ...state, explore: { ...state.explore, uid: uidInput.value.replace(/\D/g, '') } };
    changed(false);
    window.clearTimeout(runTimer);
    runPending = 0;
    drawPicture();
  });
  drawPicture();
  const report = h('details', {}, h('summary', {}, 'The report explore prints'), h('pre', { class: 'out', tabindex: '0' }, v.report));
  const pictureHead = v.result.from === 'local' ? h('label', { class: 'uid-label', for: 'explore-uid' }, 'Ports × destination addresses for uid (gid = uid) ', uidInput) : h('p', {}, 'Ports × destination addresses, for the first source range:');
  into.replaceChildren(commandLine(v.command), h('h3', {}, 'Classes'), filter, count, h('div', { class: 'table-wrap' }, table), h('h3', {}, 'Picture'), pictureHead, picture, report);
}

function ipv4(a: string): number {
  const p = a.split('.').map(Number);
  return p.length === 4 ? ((p[0]! << 24) >>> 0) + (p[1]! << 16) + (p[2]! << 8) + p[3]! : 0;
}

/** Cut points of an axis: every range's bounds, each segment then drawn with a width that grows with the log of its size. */
function axis(ranges: readonly (readonly [number, number])[], lo: number, hi: number): { cuts: number[]; pos: (v: number) => number; total: number } {
  const set = new Set<number>([lo, hi + 1]);
  for (const [a, b] of ranges) {
    if (a > lo && a <= hi) set.add(a);
    if (b + 1 > lo && b + 1 <= hi) set.add(b + 1);
  }
  const cuts = [...set].sort((a, b) => a - b);
  const widths = cuts.slice(1).map((c, i) => 1 + Math.log2(c - cuts[i]!) / 4);
  const starts = [0];
  for (const w of widths) starts.push(starts[starts.length - 1]! + w);
  const pos = (v: number): number => {
    let i = 0;
    while (i + 1 < cuts.length && cuts[i + 1]! <= v) i++;
    if (i >= widths.length) return starts[starts.length - 1]!;
    return starts[i]! + (widths[i]! * (v - cuts[i]!)) / (cuts[i + 1]! - cuts[i]!);
  };
  return { cuts, pos, total: starts[starts.length - 1]! };
}

function explorePicture(v: ExploreView, uid: number, colour: (i: number) => string): SVGSVGElement | HTMLElement {
  const local = v.result.from === 'local';
  const rects: { x: [number, number]; y: [number, number]; i: number; c: ExploreClass }[] = [];
  let firstSrc: string | null = null;
  v.result.classes.forEach((c, i) => {
    if (c.family !== 4) return;
    for (const b of c.boxes) {
      if (local && b.uid && (uid < b.uid[0] || uid > b.uid[1])) continue;
      if (local && b.gid && (uid < b.gid[0] || uid > b.gid[1])) continue;
      if (!local && b.src) {
        firstSrc ??= b.src[0];
        if (ipv4(firstSrc) < ipv4(b.src[0]) || ipv4(firstSrc) > ipv4(b.src[1])) continue;
      }
      const dport: [number, number] = b.dport ? [b.dport[0], b.dport[1]] : [0, 65535];
      const dst: [number, number] = b.dst ? [ipv4(b.dst[0]), ipv4(b.dst[1])] : [0, 0xffffffff];
      rects.push({ x: dport, y: dst, i, c });
    }
  });
  if (rects.length === 0) return h('p', {}, 'No IPv4 class for this choice.');
  const ax = axis(rects.map((r) => r.x), Math.min(...rects.map((r) => r.x[0])), Math.max(...rects.map((r) => r.x[1])));
  const ay = axis(rects.map((r) => r.y), Math.min(...rects.map((r) => r.y[0])), Math.max(...rects.map((r) => r.y[1])));
  const W = 640;
  const H = 360;
  const L = 110;
  const T = 10;
  const B = 40;
  const sx = (W - L - 10) / ax.total;
  const sy = (H - T - B) / ay.total;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': `Destination ports across, destination addresses down, coloured by class${local ? `, for uid ${uid}` : ''}` });
  for (const r of rects) {
    const x0 = L + ax.pos(r.x[0]) * sx;
    const x1 = L + ax.pos(r.x[1] + 1) * sx;
    const y0 = T + ay.pos(r.y[0]) * sy;
    const y1 = T + ay.pos(r.y[1] + 1) * sy;
    const rect = s('rect', { x: x0, y: y0, width: Math.max(1, x1 - x0), height: Math.max(1, y1 - y0), fill: colour(r.i) });
    rect.append(s('title', {}, `class ${r.i + 1}: ${classLabel(r.c)}\nports ${r.x[0]}–${r.x[1]}\n${r.c.boxes.length} box(es)`));
    svg.append(rect);
  }
  const ip = (n: number): string => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  let lastX = -Infinity;
  for (const c of ax.cuts) {
    const px = L + ax.pos(c) * sx;
    if (px - lastX < 34 && c !== ax.cuts[ax.cuts.length - 1]) continue;
    lastX = px;
    svg.append(s('line', { x1: px, y1: H - B, x2: px, y2: H - B + 4, stroke: 'currentColor' }));
    svg.append(s('text', { x: px, y: H - B + 15, 'text-anchor': c === ax.cuts[ax.cuts.length - 1] ? 'end' : 'middle' }, String(Math.min(c, 65535))));
  }
  let lastY = -Infinity;
  for (const c of ay.cuts) {
    const py = T + ay.pos(c) * sy;
    if (py - lastY < 12) continue;
    lastY = py;
    svg.append(s('text', { x: L - 4, y: py + 4, 'text-anchor': 'end' }, ip(Math.min(c, 0xffffffff))));
  }
  svg.append(s('text', { x: L + (W - L) / 2, y: H - 6, 'text-anchor': 'middle' }, 'destination port (a band per range that behaves alike)'));
  return svg;
}

// ---------------------------------------------------------------------------------------------
// Mesh and compile.

function showMesh(into: HTMLElement, v: MeshView | PlaygroundFailure): void {
  if (failed(v)) return showFailure(into, v);
  into.removeAttribute('aria-busy');
  const j = v.json;
  const card = h('dl', { class: 'card', id: 'mesh-card' });
  row(card, 'verdict', j.verdict, j.verdict === 'meshed' ? 'verdict-meshed' : 'verdict-bad');
  const hops = h('ol', { class: 'hops' }, ...j.hops.map((hp) => h('li', {}, h('strong', {}, `${hp.pod}: `), `${hp.from} → ${hp.to}`, h('br'), h('span', { class: 'why' }, `${hp.why} — ${hp.receiver}`))));
  const diagnosis = j.diagnosis.length ? h('ul', { class: 'diagnosis' }, ...j.diagnosis.map((d) => h('li', {}, d))) : h('p', {}, 'No diagnosis: both proxies were traversed.');
  into.replaceChildren(card, commandLine(v.command), h('h3', {}, 'Hops'), hops, h('h3', {}, 'Diagnosis'), diagnosis, h('details', {}, h('summary', {}, 'As mesh prints it'), h('pre', { class: 'out', tabindex: '0' }, v.text)), h('details', {}, h('summary', {}, 'Mermaid'), h('pre', { class: 'out', tabindex: '0' }, v.mermaid)));
}

function showCompile(into: HTMLElement, v: CompileView | PlaygroundFailure): void {
  if (failed(v)) return showFailure(into, v);
  into.removeAttribute('aria-busy');
  const msgs = v.messages.length ? h('pre', { class: `out ${v.ok ? 'warnings' : 'summary bad'}`, role: v.ok ? 'status' : 'alert' }, v.messages.join('\n')) : null;
  into.replaceChildren(v.command ? commandLine(v.command) : '', msgs ?? '', v.output ? h('pre', { class: 'out', id: 'compile-output', tabindex: '0' }, v.output) : h('p', {}, 'Nothing written.'));
}

// ---------------------------------------------------------------------------------------------
// Examples, sharing, keys.

function bindExamples(): void {
  const select = $<HTMLSelectElement>('example');
  for (const ex of EXAMPLES) select.append(h('option', { value: ex.id, title: ex.source }, ex.title));
  select.addEventListener('change', () => {
    const ex = EXAMPLES.find((e) => e.id === select.value);
    if (!ex) return;
    load(ex.apply(state));
    select.value = '';
  });
  const meshSelect = $<HTMLSelectElement>('mesh-example');
  meshSelect.addEventListener('change', () => {
    const id = meshSelect.value;
    meshSelect.value = '';
    if (id === 'builtin') load({ ...state, mesh: { ...state.mesh, client: '', server: '' } });
    else {
      const ex = EXAMPLES.find((e) => e.id === id);
      if (ex) load(ex.apply(state));
    }
  });
}

function load(next: PlaygroundState): void {
  state = next;
  fillForm();
  ask('check', state);
  changed(false);
  run();
}

function bindShare(): void {
  const b = $<HTMLButtonElement>('share');
  b.addEventListener('click', async () => {
    const hash = await writeHash();
    const url = `${location.origin}${location.pathname}${hash}`;
    const status = $('share-status');
    try {
      await navigator.clipboard.writeText(url);
      status.textContent = `Link copied (${url.length.toLocaleString()} characters). It holds everything on the page; nothing was uploaded.`;
    } catch {
      status.textContent = 'The address bar holds the link to this view.';
    }
  });
}

function bindKeys(): void {
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    }
  });
  for (const v of VIEW_IDS) {
    $(`form-${v}`).addEventListener('submit', (e) => {
      e.preventDefault();
      run(v);
    });
  }
  const ta = editor();
  ta.addEventListener('scroll', syncScroll);
  // Tab indents in the editor only with a modifier-free Tab after Escape was not pressed: keep Tab for moving focus.
}

// ---------------------------------------------------------------------------------------------

handlers.set('check', (v) => showCheck(v as CheckView));
handlers.set('connect', (v) => showTrace($('results-connect'), v as TraceView | PlaygroundFailure));
handlers.set('packet', (v) => showTrace($('results-packet'), v as TraceView | PlaygroundFailure));
handlers.set('explore', (v) => showExplore($('results-explore'), v as ExploreView | PlaygroundFailure));
handlers.set('mesh', (v) => showMesh($('results-mesh'), v as MeshView | PlaygroundFailure));
handlers.set('compile', (v) => showCompile($('results-compile'), v as CompileView | PlaygroundFailure));

async function start(): Promise<void> {
  bindForm();
  bindTabs();
  bindExamples();
  bindShare();
  bindKeys();
  const fromLink = await readHash();
  if (!fromLink) state = EXAMPLES[0]!.apply(DEFAULT_STATE);
  fillForm();
  ask('check', state);
  run();
  if (!fromLink) void writeHash();
  window.addEventListener('hashchange', async () => {
    if (await readHash()) {
      fillForm();
      ask('check', state);
      run();
    }
  });
  document.body.dataset['ready'] = '1';
}

// For the tests and the curious: the last answer's time per job, the state, and whether work is pending.
(window as unknown as { playground: unknown }).playground = {
  timings,
  get state() { return state; },
  get idle() { return inFlight.size === 0 && waiting.size === 0 && runPending === 0 && checkPending === 0; },
};
void start();
