// Pods whose capture depends on policy routing: an Istio sidecar in TPROXY mode and an ambient
// pod, each with the `ip rule`/`ip route` its component adds (shared by the explore tests and
// their kernel differential).
import { compileIstio, compileIstioAmbient, parseIstioIptablesArgs } from '../../src/compile/istio/index.js';
import { parseIpRoute, parseIpRule } from '../../src/engine/path/ip-args.js';
import type { NetnsOptions } from '../../src/engine/path/netns.js';

/** The `ip` argv a compiler returns, as the namespace's policy rules and routes. */
export function ipRouting(commands: readonly (readonly string[])[]): Pick<NetnsOptions, 'ipRules' | 'routes'> {
  const args = (c: readonly string[]): string => [c[1]!, ...c.slice(4)].join(' ');
  return {
    ipRules: commands.filter((c) => c[2] === 'rule').map((c) => parseIpRule(args(c))),
    routes: commands.filter((c) => c[2] === 'route').map((c) => parseIpRoute(args(c))),
  };
}

const tproxy = compileIstio(parseIstioIptablesArgs(['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-i', '*', '-b', '*']));
const ambient = compileIstioAmbient({});

/** The pods: rules, listeners (Envoy's and ztunnel's inbound sockets are transparent) and routing. */
export const POLICY_PODS: { readonly name: string; readonly options: NetnsOptions; readonly ipCommands: readonly (readonly string[])[] }[] = [
  {
    name: 'Istio sidecar in TPROXY mode',
    options: { rules: tproxy.restore[0]!.text, listen: [{ port: 15001, uid: 1337 }, { port: 15006, uid: 1337, transparent: true }, 8080], ...ipRouting(tproxy.ipCommands) },
    ipCommands: tproxy.ipCommands,
  },
  {
    name: 'Istio ambient pod (in-pod ztunnel rules)',
    options: { rules: ambient.restore[0]!.text, listen: [{ port: 15001, transparent: true }, { port: 15006, transparent: true }, { port: 15008, transparent: true }, 8080], ...ipRouting(ambient.ipCommands) },
    ipCommands: ambient.ipCommands,
  },
];
