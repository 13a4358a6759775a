/**
 * Istio's sidecar traffic capture: istio-init / istio-iptables and the istio-cni plugin.
 *
 * @module
 */
export { parseIstioIptablesArgs, parseIstioIptablesCommandLine, formatIstioIptablesArgs, ISTIO_IPTABLES_FLAGS } from './args.js';
export type { IstioCommandLine } from './args.js';
export { IptablesRuleBuilder, IP_VERSION_SPECIFIC } from './builder.js';
export { NftablesRuleBuilder } from './nft-transaction.js';
export type { NftBuilderRule, NftChainSpec, NftRuleSpec } from './nft-transaction.js';
export type { BuilderRule, IstioRuleNote } from './builder.js';
export { compileIstioCni } from './cni.js';
export type { IstioCniInput, IstioCniResult, IstioRedirect } from './cni.js';
export { compileIstio } from './compile.js';
export type { IstioCompileOptions, IstioCompileResult, IstioRestore, IstioRule } from './compile.js';
export {
  detectEnableIPv6,
  ISTIO_DEFAULT_CONFIG,
  istioConfig,
  parseResolvConf,
  resolveIstioConfig,
  splitDnsServers,
  splitIstioList,
} from './config.js';
export type { IstioConfig } from './config.js';
export * from './defaults.js';
export {
  formatIstioCommands,
  formatIstioRestore,
  formatIstioResult,
  formatIstioSave,
  ISTIO_OUTPUT_FORMATS,
  istioRulesets,
} from './format.js';
export type { IstioOutputFormat } from './format.js';
export { istioInitArgsForPod } from './inject.js';
export type { IstioInjectorValues } from './inject.js';
export { ISTIO_CURRENT_SHAPE, istioShape, parseIstioVersion } from './version.js';
export type { IstioShape, IstioVersion } from './version.js';
export {
  AMBIENT,
  AMBIENT_DEFAULT_CONFIG,
  AMBIENT_NO_OVERRIDES,
  ambientEnrolment,
  ambientPodOverrides,
  ambientRedirectDNS,
  compileIstioAmbient,
} from './ambient.js';
export type { AmbientCompileResult, AmbientConfig, AmbientInput, AmbientPodOverrides } from './ambient.js';
export { formatIstioAmbientResult } from './format.js';
export { ISTIO_LATEST_RELEASE, ISTIO_OLDEST_RELEASE, istioReleaseFeatures } from './version.js';
export type { IstioReleaseFeatures } from './version.js';
