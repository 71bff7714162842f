/**
 * The one router every surface calls. Middleware applies the check order once: the guard
 * (credential, plan, scope, requests per minute), then the body stage (unreadable bodies),
 * then input validation, then the procedure (model, concurrency, credits in core).
 */
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server"
import { z } from "zod"
import {
  Account,
  GenerateRequest,
  GenerationTask,
  GenerationTaskList,
  GetGenerationParams,
  ListGenerationsQuery
} from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import { Generations } from "../services/Generations.ts"
import { accountRouter } from "./account.ts"
import { runProcedure } from "./context.ts"
import { admitted, t, withBody } from "./init.ts"

const renderAccount = (principal: Principal): Account => ({
  id: principal.accountId,
  plan: principal.plan,
  credits: {
    subscription: principal.balance.subscription,
    onetime: principal.balance.onetime,
    total: principal.balance.subscription + principal.balance.onetime
  },
  rate_limits: {
    requests_per_minute: principal.requestsPerMinute,
    concurrent_generations: principal.concurrencyLimit
  },
  auth: {
    kind: principal.credential.kind,
    scopes: [...principal.scopes],
    key: principal.credential.kind === "api_key"
      ? {
        id: principal.credential.keyId,
        name: principal.credential.name,
        expires_at: principal.credential.expiresAt?.toISOString() ?? null
      }
      : null
  }
})

const NoInput = z.strictObject({}).optional()

export const appRouter = t.router({
  /** The account holder's dashboard: signed-in sessions only (trpc/account.ts). */
  account: accountRouter,
  me: admitted
    .meta({
      openapi: {
        method: "GET",
        path: "/v1/me",
        summary: "The calling account",
        description: "Identity, plan, credit balance and rate limits. Consumes no credits; a connection test.",
        tags: ["account"],
        protect: true
      }
    })
    .input(NoInput)
    .output(Account)
    .query(({ ctx }) => renderAccount(ctx.principal)),

  generations: t.router({
    create: withBody
      .meta({
        openapi: {
          method: "POST",
          path: "/v1/music/generations",
          summary: "Generate music",
          description: "Deducts the model's credits and enqueues the task. Answers 202 with the pending task. " +
            "Send an `Idempotency-Key` header to retry safely.",
          tags: ["generations"],
          protect: true,
          successDescription: "The task, accepted and pending."
        },
        scope: "music:generate",
        successStatus: 202
      })
      .input(GenerateRequest)
      .output(GenerationTask)
      .mutation(async ({ ctx, input }) => {
        const outcome = await runProcedure(
          ctx,
          Generations.use((generations) => generations.create(ctx.principal, input, ctx.idempotencyKey))
        )
        ctx.response.status = outcome.status
        if (outcome.replayed) ctx.response.headers["idempotent-replayed"] = "true"
        return outcome.body
      }),

    get: admitted
      .meta({
        openapi: {
          method: "GET",
          path: "/v1/music/generations/{id}",
          summary: "Get a generation task",
          tags: ["generations"],
          protect: true
        },
        scope: "music:generate"
      })
      .input(GetGenerationParams)
      .output(GenerationTask)
      .query(({ ctx, input }) =>
        runProcedure(ctx, Generations.use((generations) => generations.get(ctx.principal, input.id)))
      ),

    list: admitted
      .meta({
        openapi: {
          method: "GET",
          path: "/v1/music/generations",
          summary: "List generation tasks",
          description: "The account's tasks, newest first. Page with `starting_after` set to the last id seen.",
          tags: ["generations"],
          protect: true
        },
        scope: "music:generate"
      })
      .input(ListGenerationsQuery)
      .output(GenerationTaskList)
      .query(({ ctx, input }) =>
        runProcedure(
          ctx,
          Generations.use((generations) =>
            generations.list(ctx.principal, { limit: input.limit, startingAfter: input.starting_after })
          )
        )
      )
  })
})

export type AppRouter = typeof appRouter
export type RouterInputs = inferRouterInputs<AppRouter>
export type RouterOutputs = inferRouterOutputs<AppRouter>
export const createCaller = t.createCallerFactory(appRouter)

