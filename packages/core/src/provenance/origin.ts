/**
 * What a file Lyre serves says about its making (DESIGN.md section 13): the facts, and the pure
 * rule from them to the C2PA manifest and the disclosure in the file's own tags. The account and
 * the user appear nowhere: a manifest names the work, the model or engine, and the source file.
 */
import { digitalSourceTypes } from "@lyre/provenance"
import type { ActionDefinition, DigitalSourceType, Disclosure, ManifestDefinition } from "@lyre/provenance"

/** What made a file: a task's work (a song or a song tool) or an export's format. */
export type FileWork =
  | "song"
  | "extension"
  | "cover"
  | "vocals"
  | "instrumental"
  | "edit"
  | "wav"
  | "midi"
  | "stems"
  | "timed_lyrics"

export interface FileOrigin {
  readonly work: FileWork
  /** The model asked for (`aether`...), or null where none applies. */
  readonly model: string | null
  /** The provider that made the audio: `engine` (the built-in engine) or the upstream's name. */
  readonly maker: string
  /** The user's own audio (an upload) is mixed into the file. */
  readonly userAudio: boolean
  /** The file it was made from (a task's source track, an export's track), when there is one. */
  readonly source: {
    /** Where storage keeps it (`<task>/<index>.mp3`, an upload's key). */
    readonly storageKey: string
    readonly title: string | null
    readonly contentType: string
  } | null
}

export interface ProductInfo {
  readonly name: string
  readonly version: string
}

const editDescriptions: Readonly<Partial<Record<FileWork, string>>> = {
  extension: "extended: a continuation composed after the source",
  cover: "covered: the same song sung again in another style",
  vocals: "vocals added: a sung melody over the source",
  instrumental: "instrumental added: an accompaniment for the source's melody",
  edit: "section edited: one span composed again, the rest as the source",
  stems: "separated into stems",
  midi: "transcribed to MIDI",
  timed_lyrics: "lyrics timed"
}

const transcodes: ReadonlySet<FileWork> = new Set(["wav"])

/** The built-in engine makes audio by rule; anything else is a trained model. */
const isEngine = (origin: FileOrigin): boolean => origin.maker === "engine"

/** The IPTC digital source type of the file. */
export const digitalSourceTypeOf = (origin: FileOrigin): DigitalSourceType =>
  origin.userAudio
    ? isEngine(origin)
      ? "compositeSynthetic"
      : "compositeWithTrainedAlgorithmicMedia"
    : isEngine(origin)
      ? "algorithmicMedia"
      : "trainedAlgorithmicMedia"

/** The engine or model named in the manifest: never an account's or a user's. */
export const agentOf = (origin: FileOrigin, product: ProductInfo) =>
  isEngine(origin)
    ? { name: `${product.name} built-in engine`, version: product.version }
    : { name: origin.model === null ? `${origin.maker} model` : `${origin.maker} model ${origin.model}` }

const sourceIngredient = "source"

/** The manifest (without its ingredient's bytes, which the signer reads) of a file of `format` titled `title`. */
export const manifestOf = (
  origin: FileOrigin,
  file: { readonly title: string; readonly format: string },
  product: ProductInfo
): Omit<ManifestDefinition, "ingredients"> => {
  const softwareAgent = agentOf(origin, product)
  const digitalSourceType = digitalSourceTypeOf(origin)
  const actions: ReadonlyArray<ActionDefinition> =
    origin.source === null
      ? [{ action: "c2pa.created", digitalSourceType, softwareAgent }]
      : [
          { action: "c2pa.opened", ingredientIds: [sourceIngredient] },
          {
            action: transcodes.has(origin.work) ? "c2pa.transcoded" : "c2pa.edited",
            digitalSourceType,
            softwareAgent,
            ...(editDescriptions[origin.work] === undefined ? {} : { description: editDescriptions[origin.work] })
          }
        ]
  return {
    title: file.title,
    format: file.format,
    claimGenerator: { name: product.name, version: product.version },
    actions
  }
}

export const sourceIngredientId = sourceIngredient

/** The disclosure in the file's own tags. */
export const disclosureOf = (origin: FileOrigin, product: ProductInfo): Disclosure => {
  const agent = agentOf(origin, product)
  const made = origin.userAudio ? "Made with AI from the user's own audio" : "Made with AI"
  return {
    text: `${made} by ${product.name} (${agent.name}); content credentials (C2PA) inside.`,
    software: `${product.name} ${product.version}`,
    digitalSourceType: digitalSourceTypes[digitalSourceTypeOf(origin)]
  }
}
