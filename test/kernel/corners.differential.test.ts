// Corners of the packet path that generated pods seldom reach, each against the kernel with real
// sockets: the same rules and probes in a real pod namespace and in a simulated one, probe by
// probe in order; outcome, address, port and SO_ORIGINAL_DST must agree.
import { namedDifferential, type NamedCase } from './connect-differential.js';
import type { SimProbe } from './generate.js';
import { describeKernel } from './harness.js';

const local = (dst: string, uid = 1000): SimProbe => ({ from: 'local', uid, gid: uid, dst });
const filter = (...lines: string[]): string => `*filter\n${lines.join('\n')}\nCOMMIT\n`;
const nat = (...lines: string[]): string => `*nat\n${lines.join('\n')}\nCOMMIT\n`;

const ANY4 = [local('0.0.0.0:8080'), local('0.0.0.0:8081')];
const ANY6 = [local('[::]:8080'), local('[::]:8081')];

// connect() to 0.0.0.0 (::) reaches the host itself: the SYN carries 127.0.0.1 (::1) from the
// start, so OUTPUT, POSTROUTING, INPUT, the listener and SO_ORIGINAL_DST all see that address.
const UNSPECIFIED: readonly NamedCase[] = [
  { name: '0.0.0.0 and :: reach the local listener', rules4: '', listen: [8080], probes: [...ANY4, ...ANY6] },
  { name: '0.0.0.0: OUTPUT sees -d 127.0.0.1', rules4: filter('-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j DROP'), listen: [8080], probes: ANY4 },
  { name: '0.0.0.0: OUTPUT never sees -d 0.0.0.0', rules4: filter('-A OUTPUT -d 0.0.0.0/32 -j DROP'), listen: [8080], probes: ANY4 },
  { name: '0.0.0.0: it leaves through lo', rules4: filter('-A OUTPUT -o lo -p tcp -m tcp --dport 8080 -j DROP'), listen: [8080], probes: ANY4 },
  { name: '0.0.0.0: INPUT sees -s 127.0.0.1', rules4: filter('-A INPUT -s 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j DROP'), listen: [8080], probes: ANY4 },
  { name: '0.0.0.0: addrtype LOCAL', rules4: filter('-A OUTPUT -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 8080 -j DROP'), listen: [8080], probes: ANY4 },
  { name: '0.0.0.0: REJECT -d 127.0.0.1', rules4: filter('-A OUTPUT -d 127.0.0.1/32 -p tcp -j REJECT'), listen: [8080], probes: ANY4 },
  { name: '::: OUTPUT sees -d ::1', rules4: '', rules6: filter('-A OUTPUT -d ::1/128 -p tcp -m tcp --dport 8080 -j DROP'), listen: [8080], probes: ANY6 },
  { name: '::: OUTPUT never sees -d ::', rules4: '', rules6: filter('-A OUTPUT -d ::/128 -j DROP'), listen: [8080], probes: ANY6 },
  { name: '0.0.0.0: REDIRECT of 127.0.0.1, SO_ORIGINAL_DST names 127.0.0.1', rules4: nat('-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 8081 -j REDIRECT --to-ports 8080'), listen: [8080], probes: ANY4 },
  { name: '::: REDIRECT of ::1, SO_ORIGINAL_DST names ::1', rules4: '', rules6: nat('-A OUTPUT -d ::1/128 -p tcp -m tcp --dport 8081 -j REDIRECT --to-ports 8080'), listen: [8080], probes: ANY6 },
  { name: '0.0.0.0: a listener on 10.0.0.2 only is not reached', rules4: '', listen: [{ address: '10.0.0.2', port: 8080 }], probes: [local('0.0.0.0:8080')] },
  { name: '0.0.0.0: a listener on 127.0.0.1 only is reached', rules4: '', listen: [{ address: '127.0.0.1', port: 8080 }], probes: [local('0.0.0.0:8080')] },
  { name: '::: a listener on fd00::2 only is not reached', rules4: '', listen: [{ address: 'fd00::2', port: 8080 }], probes: [local('[::]:8080')] },
  { name: '::: a listener on ::1 only is reached', rules4: '', listen: [{ address: '::1', port: 8080 }], probes: [local('[::]:8080')] },
];

describeKernel('corners: Netns.connect vs real sockets', () => {
  namedDifferential(UNSPECIFIED);
});
