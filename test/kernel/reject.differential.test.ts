// The REJECT area of the connect differential: REJECT in OUTPUT and INPUT, every --reject-with of
// each family, on the request and on the reply (the SYN-ACK, a closed port's RST, the answer of
// an earlier REJECT), against real sockets (reject-generate.ts).
import { connectDifferential } from './connect-differential.js';
import { describeKernel } from './harness.js';
import { generateRejectCase } from './reject-generate.js';

const CASES = 320;

describeKernel('connect differential, REJECT in OUTPUT and INPUT: Netns.connect vs real sockets', () => {
  connectDifferential(Array.from({ length: CASES }, (_, i) => generateRejectCase(i + 1)));
});
