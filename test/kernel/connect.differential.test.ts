// `Netns.connect` against the kernel: the same mesh-shaped rules are loaded into a real pod
// namespace and into a simulated one, the same probes are made with real sockets and simulated
// ones, and outcome, address, port and SO_ORIGINAL_DST must agree, probe by probe.
import { connectDifferential } from './connect-differential.js';
import { generateConnectCase } from './generate.js';
import { describeKernel } from './harness.js';

const CASES = 300;

describeKernel('connect differential: Netns.connect vs real sockets', () => {
  connectDifferential(Array.from({ length: CASES }, (_, i) => generateConnectCase(i + 1)));
});
