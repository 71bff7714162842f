/**
 * `@lyre/provenance/reader`: reading and validating content credentials alone, for a page (the
 * dashboard) as for Node, without the signing side's certificates and COSE. A page loads
 * c2pa-rs first with the file its bundler emitted: `loadC2pa(() => fetch(wasmUrl))`.
 */
export { loadC2pa } from "./c2pa.ts"
export { readAsset, readSidecar } from "./read.ts"
export type {
  ActionSummary,
  ContentCredentialsReport,
  IngredientSummary,
  ManifestSummary,
  ReadOptions,
  ValidationFailure
} from "./read.ts"
