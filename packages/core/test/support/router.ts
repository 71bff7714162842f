/**
 * A create through core's router, as a surface hands it over (`createCaller` with a call
 * context), answered as the surface would render it: the status and the error code, or 202 and
 * the task. No server: the router runs on the services of the test's own layer.
 */
import { TRPCError } from "@trpc/server"
import { Effect, Layer, ManagedRuntime } from "effect"
import { apiErrorFromTrpc, createCaller, makeCallContext, renderError } from "../../src/index.ts"
import type { CoreServices, GenerationTask, ValidationError } from "../../src/index.ts"

export type RouterAnswer =
  | { readonly status: 202 | 200; readonly task: GenerationTask; readonly replayed: boolean }
  | { readonly status: number; readonly code: string }

export interface RouterCreate {
  readonly authorization: string
  /** What the surface read as the body: anything, since an invalid body is what some tests send. */
  readonly body: unknown
  readonly idempotencyKey?: string
  readonly bodyError?: ValidationError
}

export const createThroughRouter = (request: RouterCreate) =>
  Effect.gen(function* () {
    const services = yield* Effect.context<CoreServices>()
    const runtime = yield* Effect.acquireRelease(
      Effect.sync(() => ManagedRuntime.make(Layer.succeedContext(services))),
      (made) => Effect.promise(() => made.dispose())
    )
    const context = makeCallContext(runtime, {
      authorization: request.authorization,
      idempotencyKey: request.idempotencyKey,
      bodyError: request.bodyError
    })
    const caller = createCaller(context)
    type Input = Parameters<typeof caller.generations.create>[0]
    return yield* Effect.tryPromise({
      // Handed over unchecked, as a surface does: the router's own validation is under test.
      try: () => caller.generations.create(request.body as Input),
      catch: (error) => error
    }).pipe(
      Effect.map(
        (task): RouterAnswer => ({
          status: context.response.status === 200 ? 200 : 202,
          task,
          replayed: context.response.headers["idempotent-replayed"] === "true"
        })
      ),
      Effect.catch((error) => {
        if (!(error instanceof TRPCError)) return Effect.die(error)
        const rendered = renderError(apiErrorFromTrpc(error, request.body))
        return Effect.succeed<RouterAnswer>({ status: rendered.status, code: rendered.body.error.code })
      })
    )
  })

/** An answer as `[status, code]`, `code` being `accepted` for a 202: what a table row expects. */
export const statusAndCode = (answer: RouterAnswer): readonly [number, string] =>
  "code" in answer ? [answer.status, answer.code] : [answer.status, "accepted"]
