/**
 * Sends a file to the uploads procedure with the session, reporting progress as it goes.
 * tRPC's client sends JSON only, and `fetch` tells nothing of an upload's progress, so this one
 * call is an XMLHttpRequest: the file itself is the body with its own type, the title is tRPC's
 * `input` parameter, and the answer is tRPC's shape (the server's trpcUpload.ts), its error the
 * interface's envelope under `error.data.error` as on every other call.
 */
import { currentCsrfToken, isProblem, isSignedOut, signInUrl } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"

type Upload = Outputs["uploads"]["get"]

export type Sent = { readonly ok: true; readonly value: Upload } | { readonly ok: false; readonly problem: ApiProblem }

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
    request.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    request.onload = () => {
      const answer = answerOf(request.status, request.responseText)
      if (!answer.ok && isSignedOut(answer.problem)) location.assign(signInUrl())
      resolve(answer)
    }
    request.onerror = () => resolve({ ok: false, problem: networkProblem("The file could not be sent.") })
    request.send(file)
  })
