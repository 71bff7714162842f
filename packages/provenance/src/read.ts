/**
 * Reading a file's manifests back with c2pa-rs, validated, into a summary: what made it, from
 * what, when, signed by whom, valid or not. Nothing here needs Node: the client and the CLI read
 * with it, and so does the dashboard in the browser (decision 0130).
 */
import { WasmReader } from "@contentauth/c2pa-wasm"
import { loadC2pa } from "./c2pa.ts"

export interface ActionSummary {
  readonly action: string
  readonly digitalSourceType: string | null
  readonly softwareAgent: string | null
  readonly description: string | null
  /** When it was done, as the signer said (ISO 8601). */
  readonly when: string | null
}

export interface IngredientSummary {
  readonly title: string
  readonly relationship: string
  /** The label of the ingredient's own manifest in the store, when it had one. */
  readonly manifest: string | null
}

export interface ManifestSummary {
  readonly label: string
  readonly title: string | null
  readonly claimGenerator: string | null
  readonly signedBy: string | null
  readonly signedAt: string | null
  readonly actions: ReadonlyArray<ActionSummary>
  readonly ingredients: ReadonlyArray<IngredientSummary>
}

export interface ValidationFailure {
  readonly code: string
  readonly explanation: string | null
}

export interface ContentCredentialsReport {
  /** `Trusted` (signed under a trust anchor given), `Valid`, `Invalid`, or `Missing` (no manifest). */
  readonly state: "Trusted" | "Valid" | "Invalid" | "Missing"
  /** The active manifest first, then those of its ingredients, each after the one naming it. */
  readonly manifests: ReadonlyArray<ManifestSummary>
  /** What failed validation (an untrusted signer included: it alone leaves the state `Valid`). */
  readonly failures: ReadonlyArray<ValidationFailure>
}

export interface ReadOptions {
  /** PEM certificates whose chains read `Trusted` (the operator's CA, for instance). */
  readonly trustAnchors?: string
}

type Json = Record<string, unknown>
const record = (value: unknown): Json => (typeof value === "object" && value !== null ? (value as Json) : {})
const text = (value: unknown): string | null => (typeof value === "string" ? value : null)
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const agentName = (value: unknown): string | null => {
  if (typeof value === "string") return value
  const agent = record(value)
  const name = text(agent.name)
  if (name === null) return null
  const version = text(agent.version)
  return version === null ? name : `${name} ${version}`
}

const summarize = (label: string, manifest: Json): ManifestSummary => {
  const signature = record(manifest.signature_info)
  const generator = list(manifest.claim_generator_info)[0]
  const actions = list(manifest.assertions)
    .map(record)
    .filter((assertion) => text(assertion.label)?.startsWith("c2pa.actions") === true)
    .flatMap((assertion) => list(record(assertion.data).actions).map(record))
    .map((action) => ({
      action: text(action.action) ?? "",
      digitalSourceType: text(action.digitalSourceType),
      softwareAgent: agentName(action.softwareAgent),
      description: text(action.description),
      when: text(action.when)
    }))
  return {
    label,
    title: text(manifest.title),
    claimGenerator: agentName(generator) ?? text(manifest.claim_generator),
    signedBy: text(signature.common_name) ?? text(signature.issuer),
    signedAt: text(signature.time),
    actions,
    ingredients: list(manifest.ingredients)
      .map(record)
      .map((ingredient) => ({
        title: text(ingredient.title) ?? "",
        relationship: text(ingredient.relationship) ?? "componentOf",
        manifest: text(ingredient.active_manifest)
      }))
  }
}

const sidecarFormat = "application/c2pa"
const dataHashMismatch = "assertion.dataHash.mismatch"
const untrusted = "signingCredential.untrusted"

const readerContext = (options: ReadOptions): string | undefined =>
  options.trustAnchors === undefined ? undefined : JSON.stringify({ trust: { user_anchors: options.trustAnchors } })

/** Reads and validates the manifest embedded in `bytes` (of media type `format`). */
export const readAsset = (
  bytes: Uint8Array,
  format: string,
  options: ReadOptions = {}
): Promise<ContentCredentialsReport> => read(bytes, format, options, () => null)

const readStore = async <Hash>(
  bytes: Uint8Array,
  format: string,
  options: ReadOptions,
  dataHashOf: (reader: WasmReader) => Hash | null
): Promise<ContentCredentialsReport & { readonly dataHash: Hash | null }> => {
  await loadC2pa()
  let reader: WasmReader
  try {
    reader = await WasmReader.fromBytes(format, bytes, readerContext(options))
  } catch {
    return { state: "Missing", manifests: [], failures: [], dataHash: null }
  }
  try {
    const store = record(reader.manifestStore())
    const manifests = record(store.manifests)
    const ordered: Array<ManifestSummary> = []
    const seen = new Set<string>()
    const visit = (label: string | null) => {
      if (label === null || seen.has(label) || manifests[label] === undefined) return
      seen.add(label)
      const summary = summarize(label, record(manifests[label]))
      ordered.push(summary)
      for (const ingredient of summary.ingredients) visit(ingredient.manifest)
    }
    visit(text(store.active_manifest))
    const failures = list(record(record(store.validation_results).activeManifest).failure)
      .map(record)
      .map((failure) => ({ code: text(failure.code) ?? "", explanation: text(failure.explanation) }))
    const state = text(store.validation_state)
    return {
      state: state === "Trusted" || state === "Valid" ? state : "Invalid",
      manifests: ordered,
      failures,
      dataHash: dataHashOf(reader)
    }
  } finally {
    reader.free()
  }
}

const read = async (
  bytes: Uint8Array,
  format: string,
  options: ReadOptions,
  dataHashOf: (reader: WasmReader) => unknown
): Promise<ContentCredentialsReport> => {
  const { dataHash: _, ...report } = await readStore(bytes, format, options, dataHashOf)
  return report
}

/** WebCrypto's names of the hash algorithms C2PA allows. */
const webCryptoHashes: Readonly<Record<string, string>> = { sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" }

interface WholeAssetHash {
  /** WebCrypto's name of its algorithm. */
  readonly algorithm: string
  /** Base64. */
  readonly digest: string
}

const base64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

const digestOf = async (hash: WholeAssetHash, asset: Uint8Array): Promise<string> =>
  base64(new Uint8Array(await crypto.subtle.digest(hash.algorithm, asset as Uint8Array<ArrayBuffer>)))

/** The active manifest's data hash when it excludes nothing: a sidecar's. */
const wholeAssetHash = (reader: WasmReader): WholeAssetHash | null => {
  const store = record(JSON.parse(reader.crJson()))
  const label = reader.activeLabel()
  const active = list(store.manifests)
    .map(record)
    .find((manifest) => manifest.label === label)
  const hash = record(record(active?.assertions)["c2pa.hash.data"])
  const algorithm = webCryptoHashes[text(hash.alg) ?? text(active?.alg) ?? "sha256"]
  const digest = text(hash.hash)?.replace(/^b64'(.*)'$/, "$1")
  if (algorithm === undefined || digest === undefined || list(hash.exclusions).length > 0) return null
  return { algorithm, digest }
}

/**
 * Reads a sidecar manifest store and validates it against the asset it describes. This build of
 * c2pa-rs reads a store only on its own, so it checks the signature and every assertion but
 * hashes the store where the asset belongs (`assertion.dataHash.mismatch`); that one check is
 * made here instead, the asset's bytes hashed (WebCrypto) against the manifest's data hash.
 */
export const readSidecar = async (
  sidecar: Uint8Array,
  asset: Uint8Array,
  options: ReadOptions = {}
): Promise<ContentCredentialsReport> => {
  const report = await readStore(sidecar, sidecarFormat, options, wholeAssetHash)
  if (report.state === "Missing") return { state: "Missing", manifests: [], failures: [] }
  const matches = report.dataHash !== null && (await digestOf(report.dataHash, asset)) === report.dataHash.digest
  const failures = report.failures.filter((failure) => !(matches && failure.code === dataHashMismatch))
  const state =
    failures.length === 0
      ? options.trustAnchors === undefined
        ? "Valid"
        : "Trusted"
      : failures.every((failure) => failure.code === untrusted)
        ? "Valid"
        : "Invalid"
  return {
    state,
    manifests: report.manifests,
    failures: matches
      ? failures
      : [...failures, { code: dataHashMismatch, explanation: "the sidecar's data hash is not the file's" }]
  }
}
