/**
 * The lyrics agent's procedures (DESIGN.md section 12): scope `lyrics:agent` (required and enough),
 * paid at accept in the check order, their REST routes under `/v1/lyrics`.
 */
import { Lyrics } from "../lyrics/Lyrics.ts"
import { GetLyricsParams, ListLyricsQuery, LyricsRequest, LyricsTask, LyricsTaskList } from "../lyrics/model.ts"
import { runPaid, runProcedure } from "./context.ts"
import { mutation, query } from "./procedures.ts"

export const lyricsProcedures = {
  create: mutation("withBody", {
    meta: {
      openapi: {
        method: "POST",
        path: "/v1/lyrics",
        summary: "Write lyrics",
        description:
          "Two variations of words for a song (2 credits): from a prompt, fitted to a track's melody with " +
          "`track_id`, or revising `lyrics` by an `instruction`. Each variation's `text` is valid as a generation's " +
          "`lyrics`. Answers 202 with the pending task. Send an `Idempotency-Key` header to retry safely.",
        tags: ["lyrics"],
        protect: true,
        successDescription: "The lyrics task, accepted and pending."
      },
      scope: "lyrics:agent",
      successStatus: 202
    },
    input: LyricsRequest,
    output: LyricsTask,
    resolve: (ctx, input) =>
      runPaid(
        ctx,
        Lyrics.use((lyrics) => lyrics.create(ctx.principal, input, ctx.idempotencyKey))
      )
  }),

  get: query("admitted", {
    meta: {
      openapi: {
        method: "GET",
        path: "/v1/lyrics/{id}",
        summary: "Get a lyrics task",
        tags: ["lyrics"],
        protect: true
      },
      scope: "lyrics:agent"
    },
    input: GetLyricsParams,
    output: LyricsTask,
    resolve: (ctx, input) =>
      runProcedure(
        ctx,
        Lyrics.use((lyrics) => lyrics.get(ctx.principal, input.id))
      )
  }),

  list: query("admitted", {
    meta: {
      openapi: {
        method: "GET",
        path: "/v1/lyrics",
        summary: "List lyrics tasks",
        description: "The account's lyrics tasks, newest first. Page with `starting_after` set to the last id seen.",
        tags: ["lyrics"],
        protect: true
      },
      scope: "lyrics:agent"
    },
    input: ListLyricsQuery,
    output: LyricsTaskList,
    resolve: (ctx, input) =>
      runProcedure(
        ctx,
        Lyrics.use((lyrics) => lyrics.list(ctx.principal, { limit: input.limit, startingAfter: input.starting_after }))
      )
  })
}
