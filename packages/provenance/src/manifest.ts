/**
 * Signing manifests with c2pa-rs. What a manifest says is the caller's (Lyre's core decides it);
 * this module only turns it into c2pa-rs's manifest definition and signs the asset with the
 * operator's credential. Reading them back is `read.ts`.
 */
import { WasmBuilder } from "@contentauth/c2pa-wasm"
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
  /** When it was done (ISO 8601): with no time-stamp authority, the only time a manifest carries. */
  readonly when?: string
}

export interface IngredientDefinition {
  readonly id: string
  readonly title: string
  /** Its media type; its bytes are read for its own manifest, kept when it has one. */
  readonly format: string
  readonly relationship: "parentOf" | "componentOf" | "inputTo"
  readonly bytes: Uint8Array
}

export type HashAlgorithm = "sha256" | "sha384" | "sha512"

export interface ManifestDefinition {
  readonly title: string
  readonly format: string
  readonly claimGenerator: Agent
  readonly actions: ReadonlyArray<ActionDefinition>
  readonly ingredients?: ReadonlyArray<IngredientDefinition>
  /** The hash binding the manifest to the file's bytes; `defaultHashAlgorithm` unless given. */
  readonly hashAlgorithm?: HashAlgorithm
}

const actionJson = (action: ActionDefinition) => ({
  action: action.action,
  ...(action.digitalSourceType === undefined
    ? {}
    : { digitalSourceType: digitalSourceTypes[action.digitalSourceType] }),
  ...(action.softwareAgent === undefined ? {} : { softwareAgent: action.softwareAgent }),
  ...(action.description === undefined ? {} : { description: action.description }),
  ...(action.when === undefined ? {} : { when: action.when }),
  ...(action.ingredientIds === undefined ? {} : { parameters: { ingredientIds: [...action.ingredientIds] } })
})

/**
 * The hash that binds a manifest to its file's bytes. c2pa-rs hashes every byte of the file in
 * WebAssembly, where SHA-512 (64-bit words) runs faster than SHA-256, c2pa-rs's default; C2PA
 * allows both and every reader knows both (docs/performance/0123-content-credentials.md).
 */
export const defaultHashAlgorithm: HashAlgorithm = "sha512"

/** Builds the definition's manifest and hands the builder, ingredients added, to `use`. */
const withBuilder = async <A>(
  definition: ManifestDefinition,
  use: (builder: WasmBuilder) => Promise<A>
): Promise<A> => {
  await loadC2pa()
  const builder = WasmBuilder.fromJson(
    JSON.stringify({
      hash_alg: definition.hashAlgorithm ?? defaultHashAlgorithm,
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
    const signed: unknown = await builder.signAndGetManifestBytes(
      signerDefinition(signer),
      [],
      definition.format,
      asBlob(bytes)
    )
    const manifest = typeof signed === "object" && signed !== null && "manifest" in signed ? signed.manifest : null
    if (!(manifest instanceof Uint8Array)) throw new Error("c2pa-rs answered no manifest bytes")
    return manifest
  })
