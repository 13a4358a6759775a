// The library quick start of the README: parse a rule set, simulate a connection, render it.
// Run with `npm run build && node examples/quick-start.mjs` (the package imports itself by name).
import { Netns, parseIptablesSaveOrThrow, renderOutcome, renderTrace } from 'netfilter-sim';

const rules = parseIptablesSaveOrThrow(`*nat
:OUTPUT ACCEPT [0:0]
-A OUTPUT -p tcp -m owner ! --uid-owner 2102 -j REDIRECT --to-ports 4140
COMMIT
`);
const ns = new Netns({ rules, listen: [4140] });
const r = ns.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' });
console.log(r.outcome, r.address, r.port, r.originalDestination); // the same object as `connect --json`
const syn = (r.trace ?? []).filter((e) => e.packet === 0); // the SYN's journey; the SYN-ACK and ACK follow
process.stdout.write(renderTrace(syn, 'tree', { color: false }) + renderOutcome(r, { color: false }));
