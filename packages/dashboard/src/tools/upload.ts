/**
 * Sends a file to the uploads procedure with the session, reporting progress as it goes.
 * tRPC's client sends JSON only, and `fetch` tells nothing of an upload's progress, so this one
 * call is an XMLHttpRequest: the file itself is the body with its own type, the title is tRPC's
 * `input` parameter, and the answer is tRPC's shape (the server's trpcUpload.ts), its error the
 * interface's envelope under `error.data.error` as on every other call.
 *
 * Each chosen file carries an `Idempotency-Key` of its own, kept with the file: sending the same
 * pick again (after a dropped connection, or an answer that never came) reuses it, so the server
 * answers with the upload it already made instead of keeping, and counting, a second one.
 */
import { currentCsrfToken, isProblem, isSignedOut, signInUrl } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"

type Upload = Outputs["uploads"]["get"]

export type Sent = { readonly ok: true; readonly value: Upload } | { readonly ok: false; readonly problem: ApiProblem }

/** The key of each pick, for as long as the page holds its `File`. */
const keysOfPicks = new WeakMap<File, string>()

/**
 * The pick's key, made on its first send: 128 random bits in hex (`crypto.randomUUID` is only
 * there on secure origins, and a dashboard may be opened over plain HTTP on a LAN).
 */
export const idempotencyKeyOf = (file: File): string => {
  const kept = keysOfPicks.get(file)
  if (kept !== undefined) return kept
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  const key = `upload-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`
  keysOfPicks.set(file, key)
  return key
}

const networkProblem = (message: string): ApiProblem => ({ type: "api_error", code: "network_error", message })

const answerOf = (status: number, text: string): Sent => {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { ok: false, problem: networkProblem(`The server answered ${status}.`) }
  }
  if (typeof body === "object" && body !== null && "result" in body) {
    const result: unknown = body.result
    if (typeof result === "object" && result !== null && "data" in result)
      return { ok: true, value: result.data as Upload }
  }
  const error: unknown = typeof body === "object" && body !== null && "error" in body ? body.error : undefined
  const data: unknown = typeof error === "object" && error !== null && "data" in error ? error.data : undefined
  const envelope: unknown = typeof data === "object" && data !== null && "error" in data ? data.error : undefined
  return { ok: false, problem: isProblem(envelope) ? envelope : networkProblem(`The server answered ${status}.`) }
}

export const sendUpload = (
  file: File,
  title: string,
  onProgress: (sent: number, total: number) => void
): Promise<Sent> =>
  new Promise((resolve) => {
    const request = new XMLHttpRequest()
    const input = title.trim() === "" ? "" : `?input=${encodeURIComponent(JSON.stringify({ title }))}`
    request.open("POST", `/trpc/uploads.create${input}`)
    request.withCredentials = true
    // A file the browser cannot name is sent as bytes; the server says what it makes of them.
    request.setRequestHeader("content-type", file.type === "" ? "application/octet-stream" : file.type)
    const token = currentCsrfToken()
    if (token !== null) request.setRequestHeader("x-csrf-token", token)
    request.setRequestHeader("idempotency-key", idempotencyKeyOf(file))
    request.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    request.onload = () => {
      const answer = answerOf(request.status, request.responseText)
      if (!answer.ok && isSignedOut(answer.problem)) location.assign(signInUrl())
      resolve(answer)
    }
    request.onerror = () => resolve({ ok: false, problem: networkProblem("The file could not be sent.") })
    request.send(file)
  })
