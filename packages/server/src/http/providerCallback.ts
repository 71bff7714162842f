/**
 * `POST {site_url}/internal/provider/callback/{task_id}?token=...`: the provider's callbacks.
 * Answered fast: the intake writes at most one row and wakes the worker, which does the rest.
 * A wrong token or an unknown task is 404 (the two are indistinguishable), so a forger learns
 * nothing; the body is read leniently (the upstream's content type is not ours to judge).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { ManagedRuntime } from "effect"
import { Metrics } from "@lyre/core"
import { ProviderCallbacks } from "@lyre/worker"

const maxCallbackBytes = 1024 * 1024

const readBody = (req: IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxCallbackBytes) chunks.push(chunk)
    })
    req.on("end", () => {
      if (size > maxCallbackBytes) return resolve(undefined)
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch {
        resolve(undefined)
      }
    })
    req.on("error", reject)
  })

const answer = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

/** The handler; progress stages are answered without entering the runtime (no query to run). */
export const makeProviderCallbackHandler = (runtime: ManagedRuntime.ManagedRuntime<ProviderCallbacks, unknown>) => {
  let callbacks: ProviderCallbacks["Service"] | undefined
  const metrics = runtime.runSync(Metrics)
  return async (req: IncomingMessage, res: ServerResponse, taskId: string, token: string): Promise<void> => {
    if (req.method !== "POST") {
      req.resume()
      return answer(res, 405, { code: 405, msg: "POST only" })
    }
    const body = await readBody(req)
    callbacks ??= await runtime.runPromise(ProviderCallbacks)
    if (callbacks.isProgress(body)) {
      metrics.callback("progress")
      return answer(res, 200, { code: 200, msg: "success" })
    }
    const receipt = await runtime.runPromise(callbacks.receive(taskId, token, body))
    metrics.callback(receipt === "not_found" ? "refused" : receipt)
    if (receipt === "not_found") return answer(res, 404, { code: 404, msg: "Not found" })
    answer(res, 200, { code: 200, msg: "success" })
  }
}
