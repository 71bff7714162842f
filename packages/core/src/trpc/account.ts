/**
 * The account holder's dashboard over tRPC: every procedure runs for the account of the signed-in
 * session (its cookie) and nothing else, and every change needs the session's CSRF token. The
 * rules are the services' (ApiKeys, Webhooks, Accounts); this file only scopes and wires them.
 * Generating goes through `generations.*` with the same session (see `admitted` in init.ts).
 */
import { Clock, Effect } from "effect"
import { requireAccessTier } from "../domain/access.ts"
import { CreateKeyBody, CreateWebhookEndpointBody } from "../domain/admin.ts"
import { ById, RotateWebhookSecretInput, SetCreditAlertInput, UpdateWebhookEndpointInput } from "../domain/dashboard.ts"
import { InvalidParameter } from "../domain/errors.ts"
import { AccountConsole, requireCsrf } from "../credentials/AccountConsole.ts"
import { Accounts } from "../money/Accounts.ts"
import { ApiKeys } from "../credentials/ApiKeys.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { runProcedure } from "./context.ts"
import { t } from "./init.ts"

/** How long a rotated-out secret keeps signing when the holder does not say (as the admin API). */
const defaultGraceSeconds = 86_400

const signedIn = t.procedure.use(async ({ ctx, next, type }) => {
  const session = await runProcedure(
    ctx,
    Effect.gen(function* () {
      const found = yield* AccountConsole.use((console) => console.signedIn(ctx.sessionToken))
      if (type !== "query") yield* requireCsrf(found, ctx.csrfToken)
      return found
    })
  )
  return next({ ctx: { session, accountId: session.principal.accountId } })
})

/** The dashboard's procedures, nested as their tRPC paths under `account`. */
export const accountProcedures = {
  /** Who is signed in, and the CSRF token the page sends with every change. */
  session: signedIn.query(({ ctx }) => ({
    account_id: ctx.accountId,
    email: ctx.session.email,
    csrf_token: ctx.session.csrfToken
  })),

  overview: signedIn.query(({ ctx }) =>
    runProcedure(
      ctx,
      Effect.gen(function* () {
        const account = yield* Accounts.use((accounts) => accounts.get(ctx.accountId))
        const armed = yield* AccountConsole.use((console) => console.creditAlertArmed(ctx.accountId))
        const refusal = yield* requireAccessTier(account.plan).pipe(
          Effect.as(null),
          Effect.catchTag("TierInsufficient", (error) => Effect.succeed(error.message))
        )
        return {
          id: account.id,
          email: account.email,
          plan: account.plan,
          credits: account.credits,
          rate_limits: {
            requests_per_minute: account.requests_per_minute,
            concurrent_generations: account.concurrency_limit
          },
          credit_alert: { threshold: account.credit_alert_threshold, armed },
          /** Why API keys and generation are refused on this plan; null on Pro and above. */
          api_access_refusal: refusal
        }
      })
    )
  ),

  /** The overview's chart: credits spent per day by model and song tool, generations ready and failed. */
  usage: signedIn.query(({ ctx }) =>
    runProcedure(
      ctx,
      AccountConsole.use((console) => console.usage(ctx.accountId))
    )
  ),

  /** Every grant, debit, refund and adjustment, newest first. */
  ledger: signedIn.query(({ ctx }) =>
    runProcedure(
      ctx,
      Effect.map(
        Accounts.use((accounts) => accounts.ledger(ctx.accountId)),
        (entries) => [...entries].reverse()
      )
    )
  ),

  keys: {
    list: signedIn.query(({ ctx }) =>
      runProcedure(
        ctx,
        AccountConsole.use((console) => console.keys(ctx.accountId))
      )
    ),

    /** Keys need the Pro plan or higher, as every use of them does. The full key is in this answer only. */
    create: signedIn.input(CreateKeyBody).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.gen(function* () {
          yield* requireAccessTier(ctx.session.principal.plan)
          const expiresAt = input.expires_at == null ? null : new Date(input.expires_at)
          if (expiresAt !== null && expiresAt.getTime() <= (yield* Clock.currentTimeMillis)) {
            return yield* new InvalidParameter({ message: "expires_at must be in the future.", param: "expires_at" })
          }
          return yield* ApiKeys.use((keys) =>
            keys.create(ctx.accountId, { name: input.name, scopes: input.scopes, expiresAt })
          )
        })
      )
    ),

    revoke: signedIn.input(ById).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.gen(function* () {
          yield* AccountConsole.use((console) => console.ownKey(ctx.accountId, input.id))
          yield* ApiKeys.use((keys) => keys.revoke(input.id))
          return { id: input.id, revoked: true }
        })
      )
    )
  },

  webhooks: {
    list: signedIn.query(({ ctx }) =>
      runProcedure(
        ctx,
        Webhooks.use((webhooks) => webhooks.listEndpoints(ctx.accountId))
      )
    ),

    create: signedIn.input(CreateWebhookEndpointBody).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Webhooks.use((webhooks) => webhooks.createEndpoint(ctx.accountId, input))
      )
    ),

    update: signedIn.input(UpdateWebhookEndpointInput).mutation(({ ctx, input }) => {
      const { id, ...patch } = input
      return runProcedure(
        ctx,
        Effect.andThen(
          AccountConsole.use((console) => console.ownEndpoint(ctx.accountId, id)),
          Webhooks.use((webhooks) => webhooks.updateEndpoint(id, patch))
        )
      )
    }),

    delete: signedIn.input(ById).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.andThen(
          AccountConsole.use((console) => console.ownEndpoint(ctx.accountId, input.id)),
          Effect.as(
            Webhooks.use((webhooks) => webhooks.deleteEndpoint(input.id)),
            { id: input.id, deleted: true }
          )
        )
      )
    ),

    /** A mutation, so reading a secret needs the CSRF token too. */
    revealSecret: signedIn.input(ById).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.map(
          AccountConsole.use((console) => console.endpointSecret(ctx.accountId, input.id)),
          (secret) => ({ id: input.id, secret })
        )
      )
    ),

    rotateSecret: signedIn.input(RotateWebhookSecretInput).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.andThen(
          AccountConsole.use((console) => console.ownEndpoint(ctx.accountId, input.id)),
          Webhooks.use((webhooks) => webhooks.rotateSecret(input.id, input.grace_period_seconds ?? defaultGraceSeconds))
        )
      )
    ),

    ping: signedIn.input(ById).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.andThen(
          AccountConsole.use((console) => console.ownEndpoint(ctx.accountId, input.id)),
          Webhooks.use((webhooks) => webhooks.ping(input.id))
        )
      )
    ),

    deliveries: signedIn.input(ById).query(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.andThen(
          AccountConsole.use((console) => console.ownEndpoint(ctx.accountId, input.id)),
          Webhooks.use((webhooks) => webhooks.deliveries(input.id))
        )
      )
    ),

    attempts: signedIn.input(ById).query(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.andThen(
          AccountConsole.use((console) => console.ownDelivery(ctx.accountId, input.id)),
          Webhooks.use((webhooks) => webhooks.attempts(input.id))
        )
      )
    ),

    redeliver: signedIn.input(ById).mutation(({ ctx, input }) =>
      runProcedure(
        ctx,
        Effect.andThen(
          AccountConsole.use((console) => console.ownDelivery(ctx.accountId, input.id)),
          Webhooks.use((webhooks) => webhooks.redeliver(input.id))
        )
      )
    )
  },

  /** The `credits.low` threshold; setting it re-judges the armed state as the admin API does. */
  setCreditAlert: signedIn.input(SetCreditAlertInput).mutation(({ ctx, input }) =>
    runProcedure(
      ctx,
      Effect.gen(function* () {
        const account = yield* Accounts.use((accounts) =>
          accounts.update(ctx.accountId, { credit_alert_threshold: input.credit_alert_threshold })
        )
        const armed = yield* AccountConsole.use((console) => console.creditAlertArmed(ctx.accountId))
        return { threshold: account.credit_alert_threshold, armed }
      })
    )
  )
}
