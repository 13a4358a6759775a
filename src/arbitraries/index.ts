/**
 * fast-check arbitraries for rule sets, probes and mesh configurations (`netfilter-sim/arbitraries`).
 *
 * fast-check is a peer dependency: these arbitraries are built with the instance your tests
 * use. Every arbitrary takes an optional constraints object, validated when it is called, and
 * generates values that are valid by construction.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { rulesetText } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(rulesetText({ tables: ['nat'] }), (text) => myTool.accepts(text)));
 * ```
 *
 * @module
 */
export { cidr, type CidrConstraints } from './address.js';
export { portRange, type PortRange, type PortRangeConstraints } from './ports.js';
export { connection, packet, formatPacket, type ConnectionProbe, type PacketProbe, type ConnectionConstraints } from './probe.js';
export { match, target, rule, ruleArgs, type RuleConstraints, type FragmentConstraints } from './rule.js';
export {
  chain, ruleset, rulesetCommands, rulesetText, quoteRestoreArgument,
  type ChainConstraints, type ModuleConstraints, type RulesetConstraints, type RulesetTextConstraints,
} from './ruleset.js';
export {
  linkerdConfig, istioConfig, pod,
  type LinkerdConfigConstraints, type IstioConfigConstraints, type PodConstraints, type PodManifest, type PodManifestContainer,
} from './mesh.js';
export {
  networkPolicySnapshot, networkPolicyCase,
  type NetworkPolicySnapshotConstraints, type NetworkPolicyProbe,
} from './netpol.js';
