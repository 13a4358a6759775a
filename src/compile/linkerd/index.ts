/**
 * The Linkerd rule-set compilers: proxy-init (linkerd-init), the injector's view of it, and
 * linkerd-cni. Rendering to `iptables-save` text lives in `./output.js` (it needs the parser and
 * the printer).
 *
 * @module
 */
export {
  CNI_DEFAULT_CONF,
  INJECTOR_DEFAULTS,
  IPTABLES_BINARIES,
  LINKERD_ANNOTATIONS,
  LINKERD_CONTAINERS,
  PROXY_INIT_CONSTANTS,
  PROXY_INIT_DEFAULTS,
} from './defaults.js';
export {
  formatProxyInitArgs,
  parseProxyInitArgs,
  proxyInitConfig,
  type ParsedProxyInitArgs,
  type ParseProxyInitArgsOptions,
  type ProxyInitConfig,
} from './config.js';
export {
  asDestination,
  isValidPort,
  makeMultiportDestinations,
  parsePort,
  parsePortRange,
  type MultiportDestinations,
  type PortParse,
  type PortRange,
} from './ports.js';
export {
  buildFirewallConfiguration,
  compileProxyInit,
  formatCommandLine,
  type CompileProxyInitOptions,
  type FirewallConfiguration,
  type ProxyInitError,
  type ProxyInitPass,
  type ProxyInitResult,
  type ProxyInitRun,
} from './proxy-init.js';
export {
  compileLinkerdCni,
  linkerdCniConf,
  type CompileLinkerdCniInput,
  type LinkerdCniConf,
  type LinkerdCniResult,
  type LinkerdCniSkip,
} from './cni.js';
export {
  injectProxyInitArgs,
  type InjectedProxyInit,
  type InjectorValues,
  type InjectorValuesInput,
  type InjectProxyInitInput,
} from './injector.js';
export { explainProxyInitComment, type ProxyInitRuleExplanation, type ProxyInitRuleKind } from './comments.js';
export {
  CURRENT_PROXY_INIT_VERSION,
  OLDEST_PROXY_INIT_VERSION,
  cniPluginFeatures,
  CNI_PLUGIN_RELEASES,
  PROXY_INIT_RELEASES,
  isKnownProxyInitRelease,
  type CniPluginFeatures,
  parseProxyInitVersion,
  proxyInitFeatures,
  type ProxyInitFeatures,
  type ProxyInitVersion,
} from './version.js';
