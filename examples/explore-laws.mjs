// The capture laws over every probe, for what proxy-init writes (docs/explore.md).
// Run after `npm run build`: node examples/explore-laws.mjs
import { linkerdCapture, proveCaptureLaws, explainCounterexample } from 'netfilter-sim';

const proof = proveCaptureLaws(linkerdCapture({ incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102, outboundPortsToIgnore: ['4567', '4568'] }));
if (!proof.holds) throw new Error(explainCounterexample(proof.counterexample));
console.log(`${proof.law}: holds (${proof.cells} cells)`);
