/**
 * Signs the files Lyre serves (DESIGN.md section 13). The domain (`origin.ts`) decides what a
 * manifest says; this service adds the disclosure to the file's own tags, the source file as
 * the ingredient (its own manifest kept inside when it has one), and signs with the operator's
 * credential through `@lyre/provenance`: MP3 and WAV carry the manifest, any other audio (MIDI,
 * a zip of stems) is left as it is beside a sidecar `.c2pa` manifest. Files that are not audio
 * (cover images, lyrics) are not signed.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import {
  discloseInMp3,
  discloseInWav,
  loadC2pa,
  loadSigningCredentials,
  makeLocalCredentials,
  signAsset,
  signSidecar
} from "@lyre/provenance"
import type { CoseSigner, Disclosure, ManifestDefinition } from "@lyre/provenance"
import { disclosureOf, manifestOf, sourceIngredientId } from "./origin.ts"
import type { FileOrigin, ProductInfo } from "./origin.ts"

export class ContentCredentialsError extends Schema.TaggedError<ContentCredentialsError>()("ContentCredentialsError", {
  message: Schema.String
}) {}

export interface FileToSign {
  readonly bytes: Uint8Array
  /** Its media type as stored (`audio/mpeg`, `audio/wav`, `audio/midi`, `application/zip`...). */
  readonly contentType: string
  /** What the manifest calls it (a file name). */
  readonly title: string
}

export interface SignedFile {
  /** The file as it is served: with its manifest and tags where the format has a place. */
  readonly bytes: Uint8Array
  /** The sidecar manifest store (served beside the file as `<name>.c2pa`), or null. */
  readonly sidecar: Uint8Array | null
}

const mediaTypeAliases: Readonly<Record<string, string>> = {
  "audio/mp3": "audio/mpeg",
  "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav",
  "audio/x-midi": "audio/midi",
  "audio/mid": "audio/midi"
}

/** The media type without parameters, in the spelling c2pa-rs knows. */
export const mediaTypeOf = (contentType: string): string => {
  const bare = (contentType.split(";")[0] ?? "").trim().toLowerCase()
  return mediaTypeAliases[bare] ?? bare
}

/** Whether a file of this type is signed: audio, and archives of it. */
export const isSigned = (contentType: string): boolean => {
  const type = mediaTypeOf(contentType)
  return type.startsWith("audio/") || type === "application/zip"
}

export class ContentCredentials extends Context.Service<
  ContentCredentials,
  {
    /**
     * The file with its content credentials, made as `origin` says; `source` is the source
     * file's bytes (`origin.source`), null when it could not be read (the manifest then names
     * no ingredient). A file that is not signed comes back as it was.
     */
    readonly sign: (
      file: FileToSign,
      origin: FileOrigin,
      source: Uint8Array | null
    ) => Effect.Effect<SignedFile, ContentCredentialsError>
  }
>()("lyre/core/provenance/ContentCredentials") {
  /** Signs with `signer` (the operator's credential, checked at start), naming `product` as the claim generator. */
  static readonly layer = (signer: CoseSigner, product: ProductInfo) =>
    Layer.effect(ContentCredentials)(
      // c2pa-rs is compiled here, at start, rather than in the first file's re-hosting.
      Effect.as(
        Effect.promise(() => loadC2pa()),
        ContentCredentials.of({ sign: makeSign(signer, product) })
      )
    )
  /** Signs with a local CA and certificate made for this layer alone (tests, tools); no trust list holds them. */
  static readonly layerEphemeral = (product: ProductInfo = { name: "Lyre", version: "0.0.0" }) =>
    Layer.effect(ContentCredentials)(
      Effect.promise(async () => {
        const local = await makeLocalCredentials()
        const signer = await loadSigningCredentials(local.chainPem, local.keyPem)
        await loadC2pa()
        return ContentCredentials.of({ sign: makeSign(signer, product) })
      })
    )
}

const makeSign =
  (signer: CoseSigner, product: ProductInfo) =>
  (
    file: FileToSign,
    origin: FileOrigin,
    source: Uint8Array | null
  ): Effect.Effect<SignedFile, ContentCredentialsError> => {
    if (!isSigned(file.contentType)) return Effect.succeed({ bytes: file.bytes, sidecar: null })
    const format = mediaTypeOf(file.contentType)
    const withSource = origin.source !== null && source !== null
    const base = manifestOf(withSource ? origin : { ...origin, source: null }, { title: file.title, format }, product)
    const definition: ManifestDefinition =
      withSource && origin.source !== null
        ? {
            ...base,
            ingredients: [
              {
                id: sourceIngredientId,
                title: origin.source.title ?? origin.source.storageKey.split("/").pop() ?? "source",
                format: mediaTypeOf(origin.source.contentType),
                relationship: "parentOf",
                bytes: source
              }
            ]
          }
        : base
    const disclosure = disclosureOf(origin, product)
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      // Every action is this signing's: the time is the service's clock, not a time-stamp authority's.
      const when = new Date(now).toISOString()
      const dated: ManifestDefinition = {
        ...definition,
        actions: definition.actions.map((action) => ({ ...action, when }))
      }
      return signDated(file, format, dated, disclosure, signer)
    })
  }

const signDated = (
  file: FileToSign,
  format: string,
  definition: ManifestDefinition,
  disclosure: Disclosure,
  signer: CoseSigner
): Effect.Effect<SignedFile, ContentCredentialsError> =>
  Effect.tryPromise({
    try: async (): Promise<SignedFile> => {
      if (format === "audio/mpeg") {
        return { bytes: await signAsset(definition, discloseInMp3(file.bytes, disclosure), signer), sidecar: null }
      }
      if (format === "audio/wav") {
        return { bytes: await signAsset(definition, discloseInWav(file.bytes, disclosure), signer), sidecar: null }
      }
      return { bytes: file.bytes, sidecar: await signSidecar(definition, file.bytes, signer) }
    },
    catch: (cause) =>
      new ContentCredentialsError({
        message: `Could not sign ${file.title}: ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })
