/**
 * The audio types an upload may be, their file extensions and other names: plain data with no
 * imports, so a client (the CLI, a browser) can name a file's type without loading zod.
 */

/** The audio types an upload may be, by their `Content-Type`. */
export const uploadContentTypes = ["audio/mpeg", "audio/wav", "audio/flac", "audio/ogg"] as const
export type UploadContentType = (typeof uploadContentTypes)[number]

/** The file extension each type is stored under. */
export const uploadExtensionOf: { readonly [T in UploadContentType]: string } = {
  "audio/mpeg": "mp3",
  "audio/wav": "wav",
  "audio/flac": "flac",
  "audio/ogg": "ogg"
}

/** Other names clients send for the same types (a browser's `audio/x-wav`, `audio/mp3`...). */
const aliases: Readonly<Record<string, UploadContentType>> = {
  "audio/mp3": "audio/mpeg",
  "audio/x-wav": "audio/wav",
  "audio/wave": "audio/wav",
  "audio/vnd.wave": "audio/wav",
  "audio/x-flac": "audio/flac",
  "application/ogg": "audio/ogg",
  "audio/vorbis": "audio/ogg"
}

/** The upload type a media type names, or null. */
export const uploadContentTypeOf = (mediaType: string): UploadContentType | null => {
  const type = mediaType.split(";")[0]?.trim().toLowerCase() ?? ""
  const known = uploadContentTypes.find((t) => t === type)
  return known ?? aliases[type] ?? null
}

/** Other extensions the same files go by. */
const extensionAliases: Readonly<Record<string, UploadContentType>> = {
  wave: "audio/wav",
  oga: "audio/ogg",
  opus: "audio/ogg"
}

/**
 * The upload type a file name's extension names (`song.wav`: `audio/wav`), or null: what a
 * client sends as `Content-Type` for a file on disk. Whether the bytes are that is the server's
 * to judge.
 */
export const uploadContentTypeOfFileName = (name: string): UploadContentType | null => {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? ""
  return uploadContentTypes.find((t) => uploadExtensionOf[t] === extension) ?? extensionAliases[extension] ?? null
}
