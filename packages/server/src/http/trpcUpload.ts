/**
 * The dashboard's upload: `POST /trpc/uploads.create` with the file as the body (its own audio
 * `Content-Type`, or a `multipart/form-data` form), sent by the signed-in session with its CSRF
 * token. tRPC's HTTP adapter reads only JSON, so this one call is dispatched here instead: the
 * same procedure, the same guard (session, CSRF, plan, scope, rate) and the same unread body as
 * REST's upload, answered in tRPC's own shape (`{result: {data}}`, or `{error}` formatted by the
 * router's error formatter), so the page reads it as any other tRPC answer. Its fields come as
 * tRPC's `input` query parameter, as a query's do.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { callTRPCProcedure, getTRPCErrorFromUnknown } from "@trpc/server"
import {
  appRouter,
  InvalidJson,
  InvalidParameter,
  makeCallContext,
  maxIdempotencyKeyLength,
  trpcErrorShape
} from "@lyre/core"
import type { ValidationError } from "@lyre/core"
import { incomingAudio, lingerThenClose, sendJson } from "@lyre/http"
import type { AppRuntime } from "../app.ts"
import { readSessionToken } from "./session.ts"

export const uploadProcedurePath = "uploads.create"

/** True for a call of the upload procedure whose body is not JSON: the file itself, or a form. */
export const isTrpcUpload = (req: IncomingMessage, procedurePath: string): boolean => {
  if (procedurePath !== uploadProcedurePath || req.method !== "POST") return false
  const type = req.headers["content-type"]?.split(";")[0]?.trim().toLowerCase() ?? ""
  return type !== "application/json"
}

const inputOf = (search: URLSearchParams): { readonly input: unknown; readonly error: ValidationError | undefined } => {
  const raw = search.get("input")
  if (raw === null) return { input: {}, error: undefined }
  try {
    return { input: JSON.parse(raw) as unknown, error: undefined }
  } catch {
    return { input: {}, error: new InvalidJson({ message: "The input query parameter is not valid JSON." }) }
  }
}

export const makeTrpcUploadHandler =
  (runtime: AppRuntime) =>
  async (req: IncomingMessage, res: ServerResponse, search: URLSearchParams): Promise<void> => {
    const { input, error: inputError } = inputOf(search)
    // As on the dashboard's other calls, a key in the header makes a retried upload answer the first.
    const key = req.headers["idempotency-key"]
    const idempotencyKey = typeof key === "string" && key !== "" ? key : undefined
    const bodyError =
      inputError ??
      (idempotencyKey !== undefined && idempotencyKey.length > maxIdempotencyKeyLength
        ? new InvalidParameter({
            message: `Idempotency-Key must be at most ${maxIdempotencyKeyLength} characters.`,
            param: "Idempotency-Key"
          })
        : undefined)
    const ctx = makeCallContext(runtime, {
      authorization: req.headers.authorization,
      idempotencyKey,
      sessionToken: readSessionToken(req),
      csrfToken: typeof req.headers["x-csrf-token"] === "string" ? req.headers["x-csrf-token"] : undefined,
      bodyError,
      audio: incomingAudio(req)
    })
    try {
      const data: unknown = await callTRPCProcedure({
        router: appRouter,
        path: uploadProcedurePath,
        getRawInput: () => Promise.resolve(input),
        ctx,
        type: "mutation",
        signal: undefined,
        batchIndex: 0
      })
      sendJson(res, 200, { result: { data } }, ctx.response.headers)
    } catch (cause) {
      const shape = trpcErrorShape(getTRPCErrorFromUnknown(cause), uploadProcedurePath, input)
      const status = shape.data.httpStatus
      sendJson(res, status, { error: shape }, ctx.response.headers)
      // A file refused before its end: the rest is read and dropped a while, then the connection closed.
      if (!req.complete) lingerThenClose(req, res)
    }
  }
