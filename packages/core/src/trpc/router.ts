/**
 * The interface's procedures and the one router every surface calls. Their base procedures apply
 * the check order once: the guard (credential, plan, scope, requests per minute), then the body
 * stage (unreadable bodies), then input validation, then the procedure (model, concurrency,
 * credits in core).
 */
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server"
import { z } from "zod"
import {
  Account,
  Export,
  ExportList,
  ExportRequest,
  ExtendRequest,
  GenerateRequest,
  GenerationTask,
  GenerationTaskList,
  GetExportParams,
  GetGenerationParams,
  ListExportsQuery,
  ListGenerationsQuery
} from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import { Generations } from "../generation/Generations.ts"
import { SongTools } from "../generation/SongTools.ts"
import { CoverRequest, EditRequest, InstrumentalRequest, TrackTasks, VocalsRequest } from "../generation/TrackTasks.ts"
import {
  DeletedPersona,
  GetPersonaParams,
  ListPersonasQuery,
  Persona,
  PersonaList,
  PersonaRequest,
  Personas
} from "../personas/Personas.ts"
import { accountProcedures } from "./account.ts"
import { runPaid, runProcedure } from "./context.ts"
import { t } from "./init.ts"
import type { LyreMeta } from "./init.ts"
import { mutation, pathsOf, query, trpcRecordOf } from "./procedures.ts"
import type { ProcedureTree } from "./procedures.ts"
import { uploadProcedures } from "./uploads.ts"
import { lyricsProcedures } from "./lyrics.ts"

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
    key:
      principal.credential.kind === "api_key"
        ? {
            id: principal.credential.keyId,
            name: principal.credential.name,
            expires_at: principal.credential.expiresAt === null ? null : principal.credential.expiresAt.toISOString()
          }
        : null
  }
})

const NoInput = z.strictObject({}).optional()

/**
 * A task on a track (DESIGN.md section 11): a generation made from the track, paid at accept in
 * the check order, its REST route under the track.
 */
const trackTaskMeta = (route: {
  readonly segment: string
  readonly summary: string
  readonly description: string
}): LyreMeta => ({
  openapi: {
    method: "POST",
    path: `/v1/music/tracks/{track_id}/${route.segment}`,
    summary: route.summary,
    description:
      `${route.description} Any GenerateRequest field may be given (absent: the source's); priced and ` +
      "listed as a generation of its model. Answers 202 with the pending task. Send an `Idempotency-Key` header " +
      "to retry safely.",
    tags: ["track tasks"],
    protect: true,
    successDescription: "The task, accepted and pending."
  },
  scope: "music:generate",
  successStatus: 202
})

/**
 * The interface's procedures, nested as their tRPC paths: the router below is built from their
 * tRPC procedures, and REST's routes from their parts and `openapi` metadata (procedures.ts).
 */
export const procedureTable = {
  me: query("admitted", {
    meta: {
      openapi: {
        method: "GET",
        path: "/v1/me",
        summary: "The calling account",
        description: "Identity, plan, credit balance and rate limits. Consumes no credits; a connection test.",
        tags: ["account"],
        protect: true
      }
    },
    input: NoInput,
    output: Account,
    resolve: (ctx) => renderAccount(ctx.principal)
  }),

  generations: {
    create: mutation("withBody", {
      meta: {
        openapi: {
          method: "POST",
          path: "/v1/music/generations",
          summary: "Generate music",
          description:
            "Deducts the model's credits and enqueues the task. Answers 202 with the pending task. " +
            "Send an `Idempotency-Key` header to retry safely.",
          tags: ["generations"],
          protect: true,
          successDescription: "The task, accepted and pending."
        },
        scope: "music:generate",
        successStatus: 202
      },
      input: GenerateRequest,
      output: GenerationTask,
      resolve: (ctx, input) =>
        runPaid(
          ctx,
          Generations.use((generations) => generations.create(ctx.principal, input, ctx.idempotencyKey))
        )
    }),

    get: query("admitted", {
      meta: {
        openapi: {
          method: "GET",
          path: "/v1/music/generations/{id}",
          summary: "Get a generation task",
          tags: ["generations"],
          protect: true
        },
        scope: "music:generate"
      },
      input: GetGenerationParams,
      output: GenerationTask,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          Generations.use((generations) => generations.get(ctx.principal, input.id))
        )
    }),

    list: query("admitted", {
      meta: {
        openapi: {
          method: "GET",
          path: "/v1/music/generations",
          summary: "List generation tasks",
          description: "The account's tasks, newest first. Page with `starting_after` set to the last id seen.",
          tags: ["generations"],
          protect: true
        },
        scope: "music:generate"
      },
      input: ListGenerationsQuery,
      output: GenerationTaskList,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          Generations.use((generations) =>
            generations.list(ctx.principal, { limit: input.limit, startingAfter: input.starting_after })
          )
        )
    })
  },

  /** Song tools (DESIGN.md section 9): paid at accept like a generation, in the same check order. */
  tracks: {
    extend: mutation("withBody", {
      meta: {
        openapi: {
          method: "POST",
          path: "/v1/music/tracks/{track_id}/extensions",
          summary: "Extend a track",
          description:
            "A generation that continues a track of a ready task: the source up to `continue_at`, then " +
            "the continuation. Any GenerateRequest field may be given (absent: the source's); priced and listed as a " +
            "generation of its model. Answers 202 with the pending task. Send an `Idempotency-Key` header to retry safely.",
          tags: ["song tools"],
          protect: true,
          successDescription: "The extension's task, accepted and pending."
        },
        scope: "music:generate",
        successStatus: 202
      },
      input: ExtendRequest,
      output: GenerationTask,
      resolve: (ctx, input) =>
        runPaid(
          ctx,
          SongTools.use((tools) => tools.extend(ctx.principal, input, ctx.idempotencyKey))
        )
    }),

    export: mutation("withBody", {
      meta: {
        openapi: {
          method: "POST",
          path: "/v1/music/tracks/{track_id}/exports",
          summary: "Export a track",
          description:
            "WAV (5 credits), MIDI (5), stems (20) or timed lyrics (5) of a track of a ready task. " +
            "Answers 202 with the pending export, or 200 with the account's ready export of that track and format, " +
            "charged nothing. Send an `Idempotency-Key` header to retry safely.",
          tags: ["song tools"],
          protect: true,
          successDescription: "The export: pending (202), or the ready one the account already has (200)."
        },
        scope: "music:generate",
        successStatus: 202
      },
      input: ExportRequest,
      output: Export,
      resolve: (ctx, input) =>
        runPaid(
          ctx,
          SongTools.use((tools) => tools.createExport(ctx.principal, input, ctx.idempotencyKey))
        )
    }),

    cover: mutation("withBody", {
      meta: trackTaskMeta({
        segment: "covers",
        summary: "Cover a track",
        description:
          "The same song (melody, harmony, form, words) in the new `style`; `audio_weight` moves it between " +
          "the source's rhythm (1) and the new style's (0)."
      }),
      input: CoverRequest,
      output: GenerationTask,
      resolve: (ctx, input) =>
        runPaid(
          ctx,
          TrackTasks.use((tasks) => tasks.create("cover", ctx.principal, input, ctx.idempotencyKey))
        )
    }),
    vocals: mutation("withBody", {
      meta: trackTaskMeta({
        segment: "vocals",
        summary: "Add vocals to a track",
        description:
          "The source with `lyrics` sung over it on a melody composed for its chords, in its key and on its beat."
      }),
      input: VocalsRequest,
      output: GenerationTask,
      resolve: (ctx, input) =>
        runPaid(
          ctx,
          TrackTasks.use((tasks) => tasks.create("vocals", ctx.principal, input, ctx.idempotencyKey))
        )
    }),
    instrumental: mutation("withBody", {
      meta: trackTaskMeta({
        segment: "instrumentals",
        summary: "Add an accompaniment to a track",
        description:
          "An arrangement in the new `style` composed for the source's sung melody, mixed with it. " +
          "A track made without vocals is 400 `track_has_no_lyrics`; an upload is accompanied as heard (it may be a voice alone)."
      }),
      input: InstrumentalRequest,
      output: GenerationTask,
      resolve: (ctx, input) =>
        runPaid(
          ctx,
          TrackTasks.use((tasks) => tasks.create("instrumental", ctx.principal, input, ctx.idempotencyKey))
        )
    }),
    edit: mutation("withBody", {
      meta: trackTaskMeta({
        segment: "edits",
        summary: "Edit a span of a track",
        description:
          "The span from `start` to `end` (seconds, 2 to 60 apart, within the track) composed again, with " +
          "new `lyrics` when given; outside it, the source sample for sample."
      }),
      input: EditRequest,
      output: GenerationTask,
      resolve: (ctx, input) =>
        runPaid(
          ctx,
          TrackTasks.use((tasks) => tasks.create("edit", ctx.principal, input, ctx.idempotencyKey))
        )
    })
  },

  uploads: uploadProcedures,
  /** The lyrics agent (DESIGN.md section 12): scope `lyrics:agent`, 2 credits a task. */
  lyrics: lyricsProcedures,
  /** Personas (DESIGN.md section 11): free of credits; `persona_id` names one in any GenerateRequest. */
  personas: {
    create: mutation("withBody", {
      meta: {
        openapi: {
          method: "POST",
          path: "/v1/personas",
          summary: "Make a persona",
          description:
            "Keeps the voice (timbre, range, vibrato) and arrangement palette of a track of this account, " +
            "to name later as `persona_id` (aether). Free. Answers 201.",
          tags: ["personas"],
          protect: true,
          successDescription: "The persona."
        },
        scope: "music:generate",
        successStatus: 201
      },
      input: PersonaRequest,
      output: Persona,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          Personas.use((personas) => personas.create(ctx.principal, input))
        )
    }),

    get: query("admitted", {
      meta: {
        openapi: {
          method: "GET",
          path: "/v1/personas/{id}",
          summary: "Get a persona",
          tags: ["personas"],
          protect: true
        },
        scope: "music:generate"
      },
      input: GetPersonaParams,
      output: Persona,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          Personas.use((personas) => personas.get(ctx.principal, input.id))
        )
    }),

    list: query("admitted", {
      meta: {
        openapi: {
          method: "GET",
          path: "/v1/personas",
          summary: "List personas",
          description: "The account's personas, newest first. Page with `starting_after` set to the last id seen.",
          tags: ["personas"],
          protect: true
        },
        scope: "music:generate"
      },
      input: ListPersonasQuery,
      output: PersonaList,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          Personas.use((personas) =>
            personas.list(ctx.principal, { limit: input.limit, startingAfter: input.starting_after })
          )
        )
    }),

    delete: mutation("admitted", {
      meta: {
        openapi: {
          method: "DELETE",
          path: "/v1/personas/{id}",
          summary: "Delete a persona",
          description: "Later requests cannot name it; the tracks made with it stay.",
          tags: ["personas"],
          protect: true
        },
        scope: "music:generate"
      },
      input: GetPersonaParams,
      output: DeletedPersona,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          Personas.use((personas) => personas.remove(ctx.principal, input.id))
        )
    })
  },

  exports: {
    get: query("admitted", {
      meta: {
        openapi: {
          method: "GET",
          path: "/v1/music/exports/{id}",
          summary: "Get an export",
          tags: ["song tools"],
          protect: true
        },
        scope: "music:generate"
      },
      input: GetExportParams,
      output: Export,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          SongTools.use((tools) => tools.getExport(ctx.principal, input.id))
        )
    }),

    list: query("admitted", {
      meta: {
        openapi: {
          method: "GET",
          path: "/v1/music/exports",
          summary: "List exports",
          description:
            "The account's exports, newest first, of one track when `track_id` is given. " +
            "Page with `starting_after` set to the last id seen.",
          tags: ["song tools"],
          protect: true
        },
        scope: "music:generate"
      },
      input: ListExportsQuery,
      output: ExportList,
      resolve: (ctx, input) =>
        runProcedure(
          ctx,
          SongTools.use((tools) =>
            tools.listExports(ctx.principal, {
              trackId: input.track_id,
              limit: input.limit,
              startingAfter: input.starting_after
            })
          )
        )
    })
  }
} satisfies ProcedureTree

/** The one router every surface calls: the table's procedures, and the dashboard's (trpc/account.ts). */
export const appRouter = t.router({
  /** The account holder's dashboard: signed-in sessions only. */
  account: accountProcedures,
  ...trpcRecordOf(procedureTable)
})

/** Every procedure's tRPC path, the dashboard's and the table's. */
export const procedurePaths: ReadonlyArray<string> = [
  ...pathsOf(accountProcedures, "account."),
  ...pathsOf(procedureTable)
]

export type AppRouter = typeof appRouter
export type RouterInputs = inferRouterInputs<AppRouter>
export type RouterOutputs = inferRouterOutputs<AppRouter>
export const createCaller = t.createCallerFactory(appRouter)
