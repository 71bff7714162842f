/**
 * Content credentials (C2PA) for Lyre's audio: sign a manifest into MP3 and WAV files (a sidecar
 * `.c2pa` for formats with no place for one), read and validate any file's, make and check the
 * operator's signing credential, and the disclosure in a file's own tags. c2pa-rs, compiled to
 * WebAssembly, does the C2PA work; this package has no workspace dependency, so the server,
 * the client and the CLI all read manifests the same way.
 */
export { loadC2pa } from "./c2pa.ts"
export { coseSign1, reserveSize } from "./cose.ts"
export type { CoseSigner, SigningAlgorithm } from "./cose.ts"
export {
  claimSigningUsages,
  CredentialProblem,
  loadSigningCredentials,
  makeLocalCredentials
} from "./certificates.ts"
export type { CredentialPart, LocalCredentials, SigningCredentials } from "./certificates.ts"
export { defaultHashAlgorithm, digitalSourceTypes, embeddableFormats, signAsset, signSidecar } from "./manifest.ts"
export type {
  ActionDefinition,
  Agent,
  DigitalSourceType,
  HashAlgorithm,
  IngredientDefinition,
  ManifestDefinition
} from "./manifest.ts"
export { readAsset, readSidecar } from "./read.ts"
export type {
  ActionSummary,
  ContentCredentialsReport,
  IngredientSummary,
  ManifestSummary,
  ReadOptions,
  ValidationFailure
} from "./read.ts"
export { discloseInMp3, discloseInWav } from "./tags.ts"
export type { Disclosure } from "./tags.ts"
