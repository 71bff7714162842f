/**
 * `@lyre/webhooks` describes the events for receivers without depending on core; these checks
 * (made by the type checker) keep its shapes equal to core's schemas.
 */
import { describe, expectTypeOf, it } from "vitest"
import type { z } from "zod"
import type { LyreEventData, LyreEventType, WebhookTrack } from "@lyre/webhooks"
import { webhookEventTypes } from "../../src/domain/admin.ts"
import type { TaskError, Track } from "../../src/index.ts"

describe("webhook event types", () => {
  it("a job.completed track is core's Track", () => {
    expectTypeOf<WebhookTrack>().toEqualTypeOf<Readonly<Track>>()
  })

  it("a job.failed error is core's TaskError", () => {
    expectTypeOf<LyreEventData["job.failed"]["error"]>().toEqualTypeOf<Readonly<z.infer<typeof TaskError>>>()
  })

  it("every kind an endpoint subscribes to is described, and ping besides", () => {
    expectTypeOf<LyreEventType>().toEqualTypeOf<(typeof webhookEventTypes)[number] | "ping">()
  })
})
