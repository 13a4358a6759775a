/**
 * Kubernetes NetworkPolicy: validation as the API server does it, and the reference evaluator.
 *
 * @module
 */
export {
  NetworkPolicyEvaluator, evaluateNetworkPolicy, describeVerdict, NAMESPACE_NAME_LABEL,
  type NetpolOptions, type NetpolConnection, type NetpolEndpointSpec, type NetpolEndpoint, type NetpolVerdict,
  type DirectionVerdict, type DirectionReason, type PolicyDecision, type PolicyDirection,
} from './evaluate.js';
export {
  validateNetworkPolicy, expectValidNetworkPolicy, defaultNetworkPolicy, fieldErrorDiagnostics, policyKey,
  type NetpolFieldError, type FieldErrorType, type ValidateOptions, type DefaultedPolicy, type DefaultedRule, type DefaultedPort,
} from './validate.js';
export { compileSelector, selectorMatches, describeSelector, type CompiledSelector, type LabelRequirement } from './labels.js';
export { parseK8sAddress, parseK8sCidr, cidrHolds, formatK8sCidr, formatK8sAddress, type NetpolAddress, type NetpolCidr } from './cidr.js';
export { wellShaped, type NetpolSnapshot } from './shape.js';
