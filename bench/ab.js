// Two builds of netfilter-sim in one process, timed alternately on the pods' mixes (untraced, the
// outcome cache off unless --cache): the way to tell a change's effect on this machine, where
// figures drift by 10–20 % from one second to the next and two processes do not meet the same
// drift. Each pod gets one namespace per build; eight rounds of 50,000 connections alternate
// between the builds, the first changing every round (conntrack flushed every 4,096 connections).
// Prints, per pod, each build's fastest and median round and the ratio of the medians (B ÷ A: under
// 1 when B is faster). Run it both ways round: with two builds that differ little, the one given
// first has measured up to 25 % faster than the other.
//
// With --cpu, each round is timed by the process's CPU time rather than the wall clock (on a
// machine shared with other work, the wall time includes waiting for a core).
//
//   node --expose-gc bench/ab.js <checkout A> <checkout B> [--cache] [--cpu] [--json]
//   (each checkout built: npm run build; for an older commit, `git worktree add` it, link its
//   node_modules to this one's and build it)
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PODS, podOptions, timeMix } from './pods.js';
import { mix } from './probes.js';

const args = process.argv.slice(2);
const JSON_OUT = args.includes('--json');
const cache = args.includes('--cache');
const cpu = args.includes('--cpu');
const dirs = args.filter((a) => !a.startsWith('--'));
if (dirs.length !== 2) {
  process.stderr.write('usage: node --expose-gc bench/ab.js <checkout A> <checkout B> [--cache] [--cpu] [--json]\n');
  process.exit(2);
}
const builds = await Promise.all(dirs.map(async (d) => (await import(pathToFileURL(join(resolve(d), 'dist/index.js')).href)).Netns));
const ROUND = 50000;
const ROUNDS = 8;

const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);
const out = {};
for (const [name, pod] of Object.entries(PODS)) {
  const probes = mix(pod.shapes, 4096);
  const nss = builds.map((Netns) => new Netns(podOptions(pod, { outcomeCache: cache })));
  const rounds = [[], []];
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) rounds[k].push(timeMix(nss[k], probes, ROUND, cpu));
  }
  const [a, b] = rounds.map(median);
  out[name] = { a: { min: Math.min(...rounds[0]), median: a }, b: { min: Math.min(...rounds[1]), median: b }, ratio: b / a, rounds };
  say(`${pod.title}${cpu ? ' (cpu)' : ''}: A ${Math.min(...rounds[0]).toFixed(2)} / ${a.toFixed(2)} µs, B ${Math.min(...rounds[1]).toFixed(2)} / ${b.toFixed(2)} µs (fastest / median), B ÷ A ${(b / a).toFixed(3)}`);
}
if (JSON_OUT) process.stdout.write(`${JSON.stringify(out)}\n`);
