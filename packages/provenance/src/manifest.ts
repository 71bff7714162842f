/**
 * Signing and reading manifests with c2pa-rs. What a manifest says is the caller's (Lyre's core
 * decides it); this module only turns it into c2pa-rs's manifest definition, signs the asset
 * with the operator's credential, and reads a file's manifests back into a summary.
 */
import { createHash } from "node:crypto"
import { WasmBuilder, WasmReader } from "@contentauth/c2pa-wasm"
import { asBlob, loadC2pa } from "./c2pa.ts"
import { coseSign1, reserveSize } from "./cose.ts"
import type { CoseSigner } from "./cose.ts"

/** IPTC digital source types (https://cv.iptc.org/newscodes/digitalsourcetype/). */
export const digitalSourceTypes = {
  trainedAlgorithmicMedia: "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia",
  algorithmicMedia: "http://cv.iptc.org/newscodes/digitalsourcetype/algorithmicMedia",
  compositeWithTrainedAlgorithmicMedia:
    "http://cv.iptc.org/newscodes/digitalsourcetype/compositeWithTrainedAlgorithmicMedia",
  compositeSynthetic: "http://cv.iptc.org/newscodes/digitalsourcetype/compositeSynthetic"
} as const
export type DigitalSourceType = keyof typeof digitalSourceTypes

/** The formats c2pa-rs embeds a manifest in; anything else gets a sidecar. */
export const embeddableFormats: ReadonlyArray<string> = ["audio/mpeg", "audio/wav"]

export interface Agent {
  readonly name: string
  readonly version?: string
}

export interface ActionDefinition {
  /** A C2PA action: `c2pa.created`, `c2pa.opened`, `c2pa.edited`, `c2pa.transcoded`... */
  readonly action: string
  readonly digitalSourceType?: DigitalSourceType
  readonly softwareAgent?: Agent
  readonly description?: string
  /** The ingredients (their `id`) the action worked on. */
  readonly ingredientIds?: ReadonlyArray<string>
}

export interface IngredientDefinition {
  readonly id: string
  readonly title: string
  /** Its media type; its bytes are read for its own manifest, kept when it has one. */
  readonly format: string
  readonly relationship: "parentOf" | "componentOf" | "inputTo"
  readonly bytes: Uint8Array
}

export interface ManifestDefinition {
  readonly title: string
  readonly format: string
  readonly claimGenerator: Agent
  readonly actions: ReadonlyArray<ActionDefinition>
  readonly ingredients?: ReadonlyArray<IngredientDefinition>
}

const actionJson = (action: ActionDefinition) => ({
  action: action.action,
  ...(action.digitalSourceType === undefined
    ? {}
    : { digitalSourceType: digitalSourceTypes[action.digitalSourceType] }),
  ...(action.softwareAgent === undefined ? {} : { softwareAgent: action.softwareAgent }),
  ...(action.description === undefined ? {} : { description: action.description }),
  ...(action.ingredientIds === undefined ? {} : { parameters: { ingredientIds: [...action.ingredientIds] } })
})

/** Builds the definition's manifest and hands the builder, ingredients added, to `use`. */
const withBuilder = async <A>(
  definition: ManifestDefinition,
  use: (builder: WasmBuilder) => Promise<A>
): Promise<A> => {
  await loadC2pa()
  const builder = WasmBuilder.fromJson(
    JSON.stringify({
      claim_generator_info: [definition.claimGenerator],
      title: definition.title,
      format: definition.format,
      assertions: [{ label: "c2pa.actions.v2", data: { actions: definition.actions.map(actionJson) } }]
    })
  )
  try {
    for (const ingredient of definition.ingredients ?? []) {
      const json = JSON.stringify({
        title: ingredient.title,
        format: ingredient.format,
        relationship: ingredient.relationship,
        label: ingredient.id
      })
      // A format c2pa-rs cannot open (an OGG upload) is named without its bytes: no manifest to keep.
      await builder.addIngredientFromBlob(json, ingredient.format, asBlob(ingredient.bytes)).catch(() => {
        builder.addIngredient(json)
      })
    }
    return await use(builder)
  } finally {
    builder.free()
  }
}

const signerDefinition = (signer: CoseSigner) => ({
  alg: signer.algorithm,
  reserveSize,
  sign: async (claim: Uint8Array) => (await coseSign1(signer, claim)) as Uint8Array<ArrayBuffer>
})

/** Signs `bytes` (of `definition.format`, one of `embeddableFormats`): the same asset with its manifest embedded. */
export const signAsset = (definition: ManifestDefinition, bytes: Uint8Array, signer: CoseSigner): Promise<Uint8Array> =>
  withBuilder(definition, (builder) => builder.sign(signerDefinition(signer), [], definition.format, asBlob(bytes)))

/**
 * A sidecar manifest store (`.c2pa`) for a file whose format has no place for one (MIDI, a zip):
 * the asset is left as it is, and the manifest's data hash covers all of its bytes.
 */
export const signSidecar = (
  definition: ManifestDefinition,
  bytes: Uint8Array,
  signer: CoseSigner
): Promise<Uint8Array> =>
  withBuilder(definition, async (builder) => {
    builder.setNoEmbed(true)
    const signed = record(
      await builder.signAndGetManifestBytes(signerDefinition(signer), [], definition.format, asBlob(bytes))
    )
    const manifest = signed.manifest
    if (!(manifest instanceof Uint8Array)) throw new Error("c2pa-rs answered no manifest bytes")
    return manifest
  })

export interface ActionSummary {
  readonly action: string
  readonly digitalSourceType: string | null
  readonly softwareAgent: string | null
  readonly description: string | null
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
      description: text(action.description)
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

const readStore = async (
  bytes: Uint8Array,
  format: string,
  options: ReadOptions,
  dataHashOf: (reader: WasmReader) => string | null
): Promise<ContentCredentialsReport & { readonly dataHash: string | null }> => {
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
  dataHashOf: (reader: WasmReader) => string | null
): Promise<ContentCredentialsReport> => {
  const { dataHash: _, ...report } = await readStore(bytes, format, options, dataHashOf)
  return report
}

/** The active manifest's data hash (SHA-256, base64) when it excludes nothing: a sidecar's. */
const wholeAssetHash = (reader: WasmReader): string | null => {
  const store = record(JSON.parse(reader.crJson()))
  const label = reader.activeLabel()
  const active = list(store.manifests)
    .map(record)
    .find((manifest) => manifest.label === label)
  const hash = record(record(active?.assertions)["c2pa.hash.data"])
  if (hash.alg !== "sha256" || list(hash.exclusions).length > 0) return null
  return text(hash.hash)?.replace(/^b64'(.*)'$/, "$1") ?? null
}

/**
 * Reads a sidecar manifest store and validates it against the asset it describes. This build of
 * c2pa-rs reads a store only on its own, so it checks the signature and every assertion but
 * hashes the store where the asset belongs (`assertion.dataHash.mismatch`); that one check is
 * made here instead, SHA-256 over the asset's bytes against the manifest's data hash.
 */
export const readSidecar = async (
  sidecar: Uint8Array,
  asset: Uint8Array,
  options: ReadOptions = {}
): Promise<ContentCredentialsReport> => {
  const report = await readStore(sidecar, sidecarFormat, options, wholeAssetHash)
  if (report.state === "Missing") return { state: "Missing", manifests: [], failures: [] }
  const digest = createHash("sha256").update(asset).digest("base64")
  const matches = report.dataHash === digest
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
