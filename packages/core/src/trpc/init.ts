/**
 * tRPC's one instance and the middleware every router builds on: the guard (credential, plan,
 * scope, requests per minute) and the body stage, in the check order.
 */
import { initTRPC, TRPCError } from "@trpc/server"
import type { TRPCDefaultErrorShape } from "@trpc/server"
import { getHTTPStatusCodeFromError } from "@trpc/server/http"
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc"
import { Effect } from "effect"
import { rateLimitHeaders, renderError } from "../domain/errors.ts"
import type { Scope } from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import { AccountConsole, requireCsrf } from "../credentials/AccountConsole.ts"
import { Guard } from "../credentials/Guard.ts"
import { runProcedure } from "./context.ts"
import type { CallContext } from "./context.ts"
import { apiErrorFromTrpc, trpcCodeFor } from "./errors.ts"

/** Procedure metadata: the REST route (read by trpc-to-openapi and the REST adapter) and the scope. */
export interface LyreMeta {
  readonly [key: string]: unknown
  readonly openapi?: {
    readonly method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE"
    readonly path: `/${string}`
    readonly summary?: string
    readonly description?: string
    readonly tags?: Array<string>
    readonly protect?: boolean
    readonly successDescription?: string
  }
  readonly scope?: Scope
  /** The REST status of a success when it is not 200. */
  readonly successStatus?: number
  /** `audio`: the body is an upload's file (raw or multipart), handed over unread rather than parsed as JSON. */
  readonly requestBody?: "audio"
}

/** tRPC clients get the interface's envelope too, under `data.error`, beside tRPC's own shape. */
const errorFormatter = ({
  shape,
  error,
  input
}: {
  readonly shape: TRPCDefaultErrorShape
  readonly error: TRPCError
  readonly input: unknown
}) => {
  const rendered = renderError(apiErrorFromTrpc(error, input))
  return {
    ...shape,
    message: rendered.body.error.message,
    data: { ...shape.data, httpStatus: rendered.status, error: rendered.body.error }
  }
}

/** `isDev: false` keeps stacks out of every answer. */
export const t = initTRPC.context<CallContext>().meta<LyreMeta>().create({ isDev: false, errorFormatter })

/**
 * The error tRPC's HTTP adapter would answer for `error` in a call of `path`, for a call dispatched
 * beside it (the dashboard's upload): tRPC's default shape without a stack, as `isDev: false`
 * makes it, given to the router's formatter.
 */
export const trpcErrorShape = (error: TRPCError, path: string, input: unknown) =>
  errorFormatter({
    error,
    input,
    shape: {
      message: error.message,
      code: TRPC_ERROR_CODES_BY_KEY[error.code],
      data: { code: error.code, httpStatus: getHTTPStatusCodeFromError(error), path }
    }
  })

/**
 * A bearer credential when one is sent; otherwise a signed-in dashboard session (its cookie,
 * and for a change its CSRF token), admitted as the first-party `dashboard` client with the
 * same plan, scope and rate checks as every credential.
 */
const admission = (ctx: CallContext, scope: Scope | undefined, type: "query" | "mutation" | "subscription") =>
  ctx.authorization === undefined && ctx.sessionToken !== undefined
    ? Effect.gen(function* () {
        const signedIn = yield* AccountConsole.use((console) => console.signedIn(ctx.sessionToken))
        if (type !== "query") yield* requireCsrf(signedIn, ctx.csrfToken)
        return yield* Guard.use((guard) => guard.admitPrincipal(signedIn.principal, scope))
      })
    : Guard.use((guard) => guard.admit(ctx.authorization, scope, ctx.resource))

/**
 * The admission, its rate-limit headers set on the answer: what the stage adds to the context.
 * One `then` on the run rather than async layers over it: each is a promise more a request.
 */
const admit = (ctx: CallContext, scope: Scope | undefined, type: "query" | "mutation" | "subscription") =>
  runProcedure(ctx, admission(ctx, scope, type)).then(({ principal, rateLimit }) => {
    Object.assign(
      ctx.response.headers,
      rateLimitHeaders(rateLimit.limit, rateLimit.remaining, rateLimit.resetAtSeconds)
    )
    return { principal }
  })

/**
 * What a base procedure does before the procedure's own input is read: the admission, and for a
 * change the body judged after it. It returns what it adds to the context. The middleware runs it
 * for tRPC's chain, and REST runs the same stage itself (`procedures.ts`).
 */
export type Stage = (
  ctx: CallContext,
  meta: LyreMeta | undefined,
  type: "query" | "mutation" | "subscription"
) => Promise<{ readonly principal: Principal }>

/** A base procedure whose one middleware runs `stage` and hands what it adds to the next step. */
const staged = (stage: Stage) =>
  t.procedure.use(async ({ ctx, meta, next, type }) => next({ ctx: await stage(ctx, meta, type) }))

const admittedStage: Stage = (ctx, meta, type) => admit(ctx, meta?.scope, type)

/**
 * A body the adapter could not read is judged here, after the guard, as the check order says.
 * One stage with the guard rather than a second after it: each is a step of tRPC's chain on
 * every create.
 */
const withBodyStage: Stage = (ctx, meta, type) =>
  admit(ctx, meta?.scope, type).then((added) => {
    if (ctx.bodyError !== undefined) {
      throw new TRPCError({ code: trpcCodeFor(ctx.bodyError), message: ctx.bodyError.message, cause: ctx.bodyError })
    }
    return added
  })

export const admitted = staged(admittedStage)

export const withBody = staged(withBodyStage)

/** The base procedures by name, each with the stage its middleware runs. */
export const bases = {
  admitted: { procedure: admitted, stage: admittedStage },
  withBody: { procedure: withBody, stage: withBodyStage }
} as const
