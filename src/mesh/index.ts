/**
 * Meshed pods end to end: pods (as written or as running) → their rules and start-up order →
 * one network namespace each → a connection through both proxies, with a verdict, the hops and a
 * diagnosis; renderers for text, JSON, Mermaid and DOT.
 *
 * @module
 */
export { parseServices } from './address.js';
export { DEFAULT_POD_MANIFESTS, defaultPods } from './defaults.js';
export { demoLinkerd } from './demo.js';
export { ISTIO_SCENARIO_DEFAULTS } from './istio.js';
export { LINKERD_SCENARIO_DEFAULTS } from './linkerd.js';
export {
  MESH_FORMATS,
  meshJson,
  renderMesh,
  renderMeshDot,
  renderMeshJson,
  renderMeshMermaid,
  renderMeshText,
} from './render.js';
export type { MeshFormat, MeshRenderOptions } from './render.js';
export { prepareMeshPod, simulateMesh } from './simulate.js';
export type { PrepareMeshPodOptions } from './simulate.js';
export type {
  HopRule,
  MeshAmbient,
  MeshHop,
  MeshInstall,
  MeshName,
  MeshPod,
  MeshProxy,
  MeshResult,
  MeshScenarioOptions,
  MeshService,
  MeshVerdict,
  RuleNote,
  StartupEffect,
  StartupStep,
  ValidatorResult,
} from './types.js';
export { validateMeshPod } from './validate.js';
