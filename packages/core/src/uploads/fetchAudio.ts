/**
 * An upload fetched from a URL the account gave (the agents' `url`): a GET under the address
 * rule webhooks are sent under (@lyre/webhooks' `outboundTarget`: no loopback, private or
 * link-local address, on the literal and on the address connected to), each redirect hop
 * checked again, a declared length past the cap refused unread and a streamed one cut past it,
 * and one time-out for the whole fetch, connect to last byte. The body then goes through the
 * same receive as a REST upload's.
 */
import { extname } from "node:path"
import { Transform } from "node:stream"
import type { IncomingMessage } from "node:http"
import { outboundTarget, PRIVATE_ADDRESS } from "@lyre/webhooks"
import { InvalidParameter, UploadTooLarge } from "../domain/errors.ts"
import { uploadContentTypes, uploadExtensionOf } from "./model.ts"
import type { OpenedAudio } from "./UploadFiles.ts"

export interface FetchRules {
  /** The operator's `WEBHOOK_ALLOW_PRIVATE`: the one switch for every URL Lyre is given. */
  readonly allowPrivate: boolean
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly maxRedirects: number
}

/** Seconds a fetch may take from connect to its last byte. */
export const uploadFetchTimeoutSeconds = 60
/** Redirects followed, each to an address the rule allows. */
export const uploadFetchMaxRedirects = 3

const mediaTypeOf = (header: string | undefined): string => header?.split(";")[0]?.trim().toLowerCase() ?? ""

/** The answer's type, unless it is none or generic: then the type the path's extension names. */
const typeOf = (declared: string | undefined, answered: string | undefined, url: URL): string => {
  if (declared !== undefined) return declared
  const type = mediaTypeOf(answered)
  if (type !== "" && type !== "application/octet-stream" && type !== "binary/octet-stream") return type
  const extension = extname(url.pathname).slice(1).toLowerCase()
  return uploadContentTypes.find((t) => uploadExtensionOf[t] === extension) ?? type
}

const refuse = (message: string) => new InvalidParameter({ message: `url: ${message}`, param: "url" })

const reasonOf = (error: NodeJS.ErrnoException): string => {
  switch (error.code) {
    case PRIVATE_ADDRESS:
      return `${error.message}; uploads are fetched from public addresses only.`
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the name does not resolve (${error.message}).`
    default:
      return `the fetch failed (${error.message || String(error.code)}).`
  }
}

/** Fetches `raw` (its type `contentType` when the caller named one) and opens it as an upload's file. */
export const fetchAudio = (raw: string, contentType: string | undefined, rules: FetchRules): Promise<OpenedAudio> =>
  new Promise((resolve) => {
    let settled = false
    let current: { destroy: (error?: Error) => void } | undefined
    const timeoutMessage = `no complete answer within ${Math.round(rules.timeoutMs / 1000)} s`
    const timer = setTimeout(() => {
      // Before the answer: the fetch is refused. Mid-body: the stream breaks, and the receive
      // refuses the upload as one whose body could not be read.
      settle({ ok: false, error: refuse(`${timeoutMessage}.`) })
      current?.destroy(new Error(`the fetch from url had ${timeoutMessage}`))
    }, rules.timeoutMs)
    const settle = (opened: OpenedAudio): void => {
      if (settled) return
      settled = true
      if (!opened.ok) clearTimeout(timer)
      resolve(opened)
    }

    const hop = (target: string, redirectsLeft: number): void => {
      const checked = outboundTarget(target, rules.allowPrivate, "are fetched")
      if (!checked.ok) {
        const suffix =
          checked.refusal.code === "private_address" ? "; uploads are fetched from public addresses only." : "."
        return settle({ ok: false, error: refuse(`${checked.refusal.message}${suffix}`) })
      }
      const { url, transport, options } = checked.target
      const req = transport.get(url, { headers: { "user-agent": "Lyre-Uploads/1", accept: "audio/*" }, ...options })
      current = req
      req.on("error", (error: NodeJS.ErrnoException) => settle({ ok: false, error: refuse(reasonOf(error)) }))
      req.on("response", (res: IncomingMessage) => answered(url, res, redirectsLeft))
    }

    const answered = (url: URL, res: IncomingMessage, redirectsLeft: number): void => {
      const status = res.statusCode ?? 0
      const location = res.headers.location
      if (status >= 300 && status < 400 && location !== undefined) {
        res.resume()
        if (redirectsLeft === 0)
          return settle({ ok: false, error: refuse(`more than ${rules.maxRedirects} redirects.`) })
        return hop(new URL(location, url).href, redirectsLeft - 1)
      }
      if (status < 200 || status >= 300) {
        res.resume()
        return settle({ ok: false, error: refuse(`${url.host} answered ${status}.`) })
      }
      const declared = Number(res.headers["content-length"] ?? Number.NaN)
      if (declared > rules.maxBytes) {
        res.destroy()
        return settle({
          ok: false,
          error: new UploadTooLarge({
            message: `An upload is at most ${rules.maxBytes} bytes; url serves ${declared}.`
          })
        })
      }
      // Counted on the way through (a listener of its own would start the flow before the receive
      // reads): past the cap the download stops there rather than running on to the time-out,
      // and the receive, counting too, refuses it as too large.
      let bytes = 0
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length
          if (bytes > rules.maxBytes) setImmediate(() => res.destroy())
          done(null, chunk)
        }
      })
      res.once("error", (error) => counted.destroy(error))
      res.once("close", () => {
        clearTimeout(timer)
        if (!res.complete) counted.destroy(new Error("the server closed the connection before the end of the file"))
      })
      current = {
        destroy: (error) => {
          res.destroy()
          counted.destroy(error)
        }
      }
      res.pipe(counted)
      settle({
        ok: true,
        file: { stream: counted, contentType: typeOf(contentType, res.headers["content-type"], url), filename: null }
      })
    }

    hop(raw, rules.maxRedirects)
  })
