/**
 * Type-checked in a project that installed the packed tarballs (packages.test.ts): the types a
 * client programs against, and proof that they are real types, not `any`.
 */
import type { Account, AppRouter, ErrorEnvelope, GenerationTask, RouterInputs, RouterOutputs } from "@lyre/core"
import type { GenerateRequest, ModelName } from "@lyre/core/schemas"
import { LyreApiError, LyreClient } from "@lyre/client"
import type { GenerationTask as ClientTask } from "@lyre/client"
import type { Lyre, LyreOptions } from "@lyre/server"
import type { LyreWebhookEvent } from "@lyre/webhooks"

export type CreateInput = RouterInputs["generations"]["create"]

export const request: CreateInput = { style: "lofi, rain", title: "Rain", lyrics: "[Verse]\nla", model: "echo" }
// @ts-expect-error: "opus" is not a model
export const wrongModel: CreateInput = { style: "lofi", title: "Rain", model: "opus" }

export const readyTracks = (task: RouterOutputs["generations"]["get"]): number =>
  task.status === "ready" ? task.tracks.length : 0
export const credits = (me: RouterOutputs["me"]): number => me.credits.total
// @ts-expect-error: the account has no `balance` field
export const noSuchField = (me: Account): number => me.balance

export const describeEvent = (event: LyreWebhookEvent): string => {
  switch (event.type) {
    case "job.completed":
      return `${event.data.task_id}: ${event.data.tracks.map((track) => track.audio_url).join(", ")}`
    case "job.failed":
      return `${event.data.task_id}: ${event.data.error.code}`
    case "credits.low":
      return `balance ${event.data.balance} < ${event.data.threshold}`
    case "key.expiring":
      return `${event.data.api_key_id} in ${event.data.days_until_expiry} days`
    case "export.completed":
      return `${event.data.id}: ${event.data.files.map((file) => file.url).join(", ")}`
    case "export.failed":
      return `${event.data.id}: ${event.data.error.code}`
    case "upload.ready":
      return `${event.data.id}: ${event.data.analysis.key}, ${event.data.track_id}`
    case "upload.failed":
      return `${event.data.id}: ${event.data.error.code}`
    case "ping":
      return event.data.webhook_endpoint_id
  }
}

export const code = (envelope: ErrorEnvelope): string => envelope.error.code
export const sameShape = (body: GenerateRequest, task: GenerationTask): boolean => body.model === task.model
export const models: ReadonlyArray<ModelName> = ["aether", "echo", "nocturne"]
export const options: LyreOptions = { publicUrl: "https://music.example.com/lyre", worker: "off" }
export type Handler = Lyre["handler"]
export type Router = AppRouter

export const client = new LyreClient({ apiKey: "lyr_live_x", baseUrl: "https://music.example.com" })
export const created: Promise<ClientTask> = client.generations.create(request)
export const sameTask = (task: ClientTask): GenerationTask => task
export const failure = (error: unknown): string | undefined =>
  error instanceof LyreApiError
    ? `${error.type}/${error.code}/${error.param ?? ""}/${error.retryAfterSeconds ?? ""}`
    : undefined
// @ts-expect-error: a create needs a style
export const noStyle = client.generations.create({ title: "Rain", lyrics: "la" })
