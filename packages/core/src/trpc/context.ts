import { Cause, Exit, Option } from "effect"
import type { Effect, ManagedRuntime } from "effect"
import { TRPCError } from "@trpc/server"
import { InternalError, isApiError } from "../domain/errors.ts"
import { causeIsDatabaseUnavailable, databaseUnavailable } from "../domain/unavailable.ts"
import type { ApiError, ValidationError } from "../domain/errors.ts"
import type { AccessTokens } from "../credentials/AccessTokens.ts"
import type { AccountConsole } from "../credentials/AccountConsole.ts"
import type { Accounts } from "../money/Accounts.ts"
import type { ApiKeys } from "../credentials/ApiKeys.ts"
import type { Charged } from "../money/charge.ts"
import type { Generations } from "../generation/Generations.ts"
import type { Guard } from "../credentials/Guard.ts"
import type { Models } from "../generation/Models.ts"
import type { OAuth } from "../credentials/OAuth.ts"
import type { Sessions } from "../credentials/Sessions.ts"
import type { Settings } from "../platform/Settings.ts"
import type { SigningKeys } from "../credentials/SigningKeys.ts"
import type { SongTools } from "../generation/SongTools.ts"
import type { Webhooks } from "../webhooks/Webhooks.ts"
import type { WebhookSignal } from "../webhooks/WebhookSignal.ts"
import type { IncomingAudio } from "../uploads/UploadFiles.ts"
import type { Uploads } from "../uploads/Uploads.ts"
import type { TrackTasks } from "../generation/TrackTasks.ts"
import type { Personas } from "../personas/Personas.ts"
import type { Lyrics } from "../lyrics/Lyrics.ts"
import { trpcCodeFor } from "./errors.ts"

/** What the procedures may use: the services of core. */
export type CoreServices =
  | AccessTokens
  | ApiKeys
  | Generations
  | Accounts
  | Guard
  | Models
  | OAuth
  | Sessions
  | SigningKeys
  | SongTools
  | Uploads
  | TrackTasks
  | Personas
  | Lyrics
  | AccountConsole
  | Settings
  | Webhooks
  | WebhookSignal

export type CoreRuntime = ManagedRuntime.ManagedRuntime<CoreServices, unknown>

/** What every surface hands a procedure call. */
export interface CallContext {
  readonly runtime: CoreRuntime
  readonly authorization: string | undefined
  /** The resource URL the surface serves: an access token must be for it. Absent: base_url. */
  readonly resource: string | undefined
  readonly idempotencyKey: string | undefined
  /** The dashboard's sign-in session cookie, and the CSRF header that must match it on a change (tRPC only). */
  readonly sessionToken: string | undefined
  readonly csrfToken: string | undefined
  /** A body the adapter could not read (bad JSON, too large, wrong type), judged at the body stage. */
  readonly bodyError: ValidationError | undefined
  /** An upload's body, handed over unread (REST only): read by the procedure once the request is admitted. */
  readonly audio: IncomingAudio | undefined
  /** Filled in by procedures: the status and headers the adapter answers with. */
  readonly response: { status: number | undefined; readonly headers: Record<string, string> }
}

export const makeCallContext = (
  runtime: CoreRuntime,
  request: {
    readonly authorization?: string | undefined
    /** E.g. `${PUBLIC_URL}/mcp` from the MCP adapter; absent means base_url (REST, tRPC). */
    readonly resource?: string | undefined
    readonly idempotencyKey?: string | undefined
    readonly sessionToken?: string | undefined
    readonly csrfToken?: string | undefined
    readonly bodyError?: ValidationError | undefined
    readonly audio?: IncomingAudio | undefined
  }
): CallContext => ({
  runtime,
  authorization: request.authorization,
  resource: request.resource,
  idempotencyKey: request.idempotencyKey,
  sessionToken: request.sessionToken,
  csrfToken: request.csrfToken,
  bodyError: request.bodyError,
  audio: request.audio,
  response: { status: undefined, headers: {} }
})

type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: ApiError }

/** What a program's exit is to a procedure: its value, or the error the interface shows for it. */
const resultOf = <A>(exit: Exit.Exit<A, unknown>): Result<A> => {
  if (Exit.isSuccess(exit)) return { ok: true, value: exit.value }
  const failure = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
  if (failure !== undefined && isApiError(failure)) return { ok: false, error: failure }
  if (causeIsDatabaseUnavailable(exit.cause)) return { ok: false, error: databaseUnavailable() }
  // Interruption alone means the process is shutting down under this request: not a fault.
  if (!Cause.hasInterruptsOnly(exit.cause)) {
    console.error(JSON.stringify({ level: "error", msg: "unexpected failure", cause: Cause.pretty(exit.cause) }))
  }
  return { ok: false, error: new InternalError({ message: "An internal error occurred." }) }
}

/**
 * Runs a core program; a defect becomes `internal_error` and is logged, never shown, unless it
 * is the database being out of reach, which is `service_unavailable` (an outage, not a fault).
 */
export const runToResult = <A, R extends CoreServices>(
  runtime: ManagedRuntime.ManagedRuntime<R, unknown>,
  program: Effect.Effect<A, ApiError, R>
): Promise<Result<A>> => runtime.runPromiseExit(program).then(resultOf)

/** The value of a procedure's exit, or its domain failure as a TRPCError carrying the tagged error. */
const valueOrThrow = <A>(exit: Exit.Exit<A, unknown>): A => {
  const result = resultOf(exit)
  if (result.ok) return result.value
  throw new TRPCError({ code: trpcCodeFor(result.error), message: result.error.message, cause: result.error })
}

/**
 * Runs a core program for a procedure. Domain failures become TRPCErrors carrying the tagged
 * error as their cause, so every adapter renders it from the one table. A `then` on the run, not
 * an async function awaiting `runToResult`: every request's admission passes here, and each
 * async layer is a promise and a turn of the microtask queue more.
 */
export const runProcedure = <A>(ctx: CallContext, program: Effect.Effect<A, ApiError, CoreServices>): Promise<A> =>
  ctx.runtime.runPromiseExit(program).then(valueOrThrow)

/**
 * Runs a paid call (a generation, an extension, an export): its status is the charge's (202,
 * or 200 for an export the account already has), and a replayed `Idempotency-Key` answer says so.
 */
export const runPaid = async <B>(
  ctx: CallContext,
  program: Effect.Effect<Charged<B>, ApiError, CoreServices>
): Promise<B> => {
  const outcome = await runProcedure(ctx, program)
  ctx.response.status = outcome.status
  if (outcome.replayed) ctx.response.headers["idempotent-replayed"] = "true"
  return outcome.body
}
