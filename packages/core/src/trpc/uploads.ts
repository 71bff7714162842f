/** The uploads' procedures (DESIGN.md section 11): free of credits, in the common check order. */
import { Effect } from "effect"
import { InvalidContentType } from "../domain/errors.ts"
import { Settings } from "../platform/Settings.ts"
import {
  CreateUploadInput,
  DeletedUpload,
  ListUploadsQuery,
  Upload,
  UploadIdParams,
  UploadList
} from "../uploads/model.ts"
import { audioFrom, UploadFromRequest } from "../uploads/uploadFrom.ts"
import { Uploads } from "../uploads/Uploads.ts"
import { runPaid, runProcedure } from "./context.ts"
import { mutation, query } from "./procedures.ts"
import type { ProcedureTree } from "./procedures.ts"

export const uploadProcedures = {
  create: mutation("withBody", {
    meta: {
      openapi: {
        method: "POST",
        path: "/v1/music/uploads",
        summary: "Upload audio",
        description:
          "Your own audio, to extend, export or cover like any track: the file as the body " +
          "(`audio/mpeg`, `audio/wav`, `audio/flac`, `audio/ogg`) or a `multipart/form-data` form with `file` and an " +
          "optional `title`. At most 50 MB, and 5 s to 8 min once decoded. Free of credits; each plan keeps a number of " +
          "uploads. Answers 202 with the pending upload; it becomes `ready` once listened to (`upload.ready`).",
        tags: ["uploads"],
        protect: true,
        successDescription: "The upload, stored and waiting to be listened to."
      },
      scope: "music:generate",
      successStatus: 202,
      requestBody: "audio"
    },
    input: CreateUploadInput,
    output: Upload,
    resolve: (ctx, input) => {
      // Only REST hands over a body as it arrives; tRPC and the agents speak JSON.
      const audio = ctx.audio
      return runPaid(
        ctx,
        audio === undefined
          ? Effect.fail(new InvalidContentType({ message: "Send the file to POST /api/v1/music/uploads as its body." }))
          : Uploads.use((uploads) => uploads.create(ctx.principal, input, audio, ctx.idempotencyKey))
      )
    }
  }),

  /**
   * The same upload sent as JSON, for the agents (MCP's `upload_audio`, an A2A file part): the
   * file inline as base64 or a URL to fetch, under the same checks and allowance. No REST route:
   * REST takes the file as the body.
   */
  createFrom: mutation("withBody", {
    meta: { scope: "music:generate", successStatus: 202 },
    input: UploadFromRequest,
    output: Upload,
    resolve: (ctx, input) =>
      runPaid(
        ctx,
        Effect.gen(function* () {
          const { webhookAllowPrivate } = yield* Settings
          const audio = audioFrom(input, webhookAllowPrivate)
          return yield* Uploads.use((uploads) =>
            uploads.create(ctx.principal, { title: input.title }, audio, ctx.idempotencyKey)
          )
        })
      )
  }),

  get: query("admitted", {
    meta: {
      openapi: {
        method: "GET",
        path: "/v1/music/uploads/{id}",
        summary: "Get an upload",
        tags: ["uploads"],
        protect: true
      },
      scope: "music:generate"
    },
    input: UploadIdParams,
    output: Upload,
    resolve: (ctx, input) =>
      runProcedure(
        ctx,
        Uploads.use((uploads) => uploads.get(ctx.principal, input.id))
      )
  }),

  list: query("admitted", {
    meta: {
      openapi: {
        method: "GET",
        path: "/v1/music/uploads",
        summary: "List uploads",
        description: "The account's uploads, newest first. Page with `starting_after` set to the last id seen.",
        tags: ["uploads"],
        protect: true
      },
      scope: "music:generate"
    },
    input: ListUploadsQuery,
    output: UploadList,
    resolve: (ctx, input) =>
      runProcedure(
        ctx,
        Uploads.use((uploads) =>
          uploads.list(ctx.principal, { limit: input.limit, startingAfter: input.starting_after })
        )
      )
  }),

  delete: mutation("admitted", {
    meta: {
      openapi: {
        method: "DELETE",
        path: "/v1/music/uploads/{id}",
        summary: "Delete an upload",
        description: "Its file is removed from storage; tracks made from it stay.",
        tags: ["uploads"],
        protect: true
      },
      scope: "music:generate"
    },
    input: UploadIdParams,
    output: DeletedUpload,
    resolve: (ctx, input) =>
      runProcedure(
        ctx,
        Uploads.use((uploads) => uploads.remove(ctx.principal, input.id))
      )
  })
} satisfies ProcedureTree
