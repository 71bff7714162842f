/**
 * An upload's body, handed to core unread (core's IncomingAudio): the raw body is the file, or
 * a `multipart/form-data` form is parsed with @fastify/busboy as it streams, its `file` part the
 * file and its `title` field the title. Nothing is read before core asks, so a request refused
 * on its credential, plan, scope, rate or declared length is answered with its body unread.
 */
import type { IncomingMessage } from "node:http"
import { extname } from "node:path"
import { Busboy } from "@fastify/busboy"
import {
  InvalidContentType,
  InvalidParameter,
  MissingParameter,
  uploadContentTypes,
  uploadExtensionOf
} from "@lyre/core"
import type { AudioFile, FormFields, IncomingAudio, ValidationError } from "@lyre/core"

const mediaTypeOf = (header: string | undefined): string => header?.split(";")[0]?.trim().toLowerCase() ?? ""

/** A part sent as `application/octet-stream` (curl's default) is named by its file's extension. */
const partType = (mimeType: string, filename: string): string => {
  const type = mediaTypeOf(mimeType)
  if (type !== "" && type !== "application/octet-stream") return type
  const extension = extname(filename).slice(1).toLowerCase()
  return uploadContentTypes.find((t) => uploadExtensionOf[t] === extension) ?? type
}

type Opened = { readonly ok: true; readonly file: AudioFile } | { readonly ok: false; readonly error: ValidationError }

const multipart = (req: IncomingMessage): IncomingAudio["open"] & { fields: () => Promise<FormFields> } => {
  let title: string | undefined
  // A second `file` part comes after the first has been read: the form is refused once it ends.
  let secondFile = false
  let finished: Promise<void> = Promise.resolve()
  const open = (): Promise<Opened> =>
    new Promise((resolve) => {
      let parser: ReturnType<typeof Busboy>
      try {
        parser = Busboy({
          headers: { ...req.headers, "content-type": req.headers["content-type"] ?? "" },
          limits: { files: 2, fields: 10, parts: 12, fieldSize: 4096 }
        })
      } catch {
        resolve({ ok: false, error: new InvalidContentType({ message: "The multipart form has no boundary." }) })
        return
      }
      let gotFile = false
      finished = new Promise((done) => {
        parser.on("finish", () => {
          done()
          if (!gotFile) {
            resolve({
              ok: false,
              error: new MissingParameter({ message: "The form has no `file` part.", param: "file" })
            })
          }
        })
        parser.on("error", () => {
          done()
          if (!gotFile) {
            resolve({ ok: false, error: new InvalidContentType({ message: "The multipart form does not parse." }) })
          }
        })
      })
      parser.on("field", (name, value) => {
        if (name === "title") title = value
      })
      parser.on("file", (name, stream, filename, _encoding, mimeType) => {
        if (name !== "file" || gotFile) {
          if (name === "file") secondFile = true
          stream.resume()
          return
        }
        gotFile = true
        resolve({ ok: true, file: { stream, contentType: partType(mimeType, filename), filename: filename || null } })
      })
      req.pipe(parser)
    })
  return Object.assign(open, {
    fields: async (): Promise<FormFields> => {
      await finished
      if (secondFile) {
        return {
          ok: false,
          error: new InvalidParameter({ message: "The form has more than one `file` part: send one.", param: "file" })
        }
      }
      return { ok: true, title }
    }
  })
}

export const incomingAudio = (req: IncomingMessage): IncomingAudio => {
  const declared = req.headers["content-length"]
  const declaredBytes = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : null
  if (mediaTypeOf(req.headers["content-type"]) === "multipart/form-data") {
    const open = multipart(req)
    return { declaredBytes, open: () => open(), fields: open.fields }
  }
  return {
    declaredBytes,
    open: () =>
      Promise.resolve({
        ok: true as const,
        file: { stream: req, contentType: mediaTypeOf(req.headers["content-type"]), filename: null }
      }),
    fields: () => Promise.resolve({ ok: true, title: undefined })
  }
}
