/**
 * `@lyre/webhooks` describes the events for receivers without depending on core; these checks
 * (made by the type checker) keep its shapes equal to core's schemas, and samples of its upload
 * and export are read by core's schemas as they stand.
 */
import { describe, expect, expectTypeOf, it } from "vitest"
import type { z } from "zod"
import type {
  LyreEventData,
  LyreEventType,
  WebhookExport,
  WebhookLyrics,
  WebhookTrack,
  WebhookUpload
} from "@lyre/webhooks"
import type { webhookEventTypes } from "../../src/domain/admin.ts"
import type { UploadAnalysis } from "../../src/domain/listening.ts"
import { Export } from "../../src/domain/models.ts"
import type { ExportFormat, TaskError, TimedWord, Track } from "../../src/domain/models.ts"
import type { LyricsTask } from "../../src/lyrics/model.ts"
import { Upload } from "../../src/uploads/model.ts"

/** Core's zod shapes infer mutable fields; an event is read only, so its shapes are readonly throughout. */
type DeepReadonly<T> =
  T extends ReadonlyArray<infer E>
    ? ReadonlyArray<DeepReadonly<E>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T

type Failure = z.infer<typeof TaskError>

/** An Upload as `upload.ready` or `upload.failed` carries it: its status, and the fields that hang on it. */
type SettledUpload<S extends "ready" | "failed"> = DeepReadonly<
  Omit<Upload, "status" | "track_id" | "analysis" | "error"> &
    (S extends "ready"
      ? { status: "ready"; track_id: string; analysis: UploadAnalysis; error: null }
      : { status: "failed"; track_id: null; analysis: null; error: Failure })
>

/** An Export as `export.completed` or `export.failed` carries it. */
type SettledExport<S extends "ready" | "failed"> = DeepReadonly<
  Omit<Export, "status" | "error"> &
    (S extends "ready" ? { status: "ready"; error: null } : { status: "failed"; error: Failure })
>

/** A LyricsTask as `lyrics.completed` or `lyrics.failed` carries it. */
type SettledLyrics<S extends "ready" | "failed"> = DeepReadonly<
  Omit<LyricsTask, "status" | "error"> &
    (S extends "ready" ? { status: "ready"; error: null } : { status: "failed"; error: Failure })
>

describe("webhook event types", () => {
  it("a lyrics.completed or lyrics.failed task is core's LyricsTask", () => {
    expectTypeOf<WebhookLyrics<"ready">>().toEqualTypeOf<SettledLyrics<"ready">>()
    expectTypeOf<WebhookLyrics<"failed">>().toEqualTypeOf<SettledLyrics<"failed">>()
  })

  it("a job.completed track is core's Track", () => {
    expectTypeOf<WebhookTrack>().toEqualTypeOf<Readonly<Track>>()
  })

  it("a job.failed error is core's TaskError", () => {
    expectTypeOf<LyreEventData["job.failed"]["error"]>().toEqualTypeOf<Readonly<z.infer<typeof TaskError>>>()
  })

  it("an upload.ready or upload.failed upload is core's Upload, its analysis core's", () => {
    expectTypeOf<NonNullable<WebhookUpload<"ready">["analysis"]>>().toEqualTypeOf<DeepReadonly<UploadAnalysis>>()
    expectTypeOf<WebhookUpload<"ready">>().toEqualTypeOf<SettledUpload<"ready">>()
    expectTypeOf<WebhookUpload<"failed">>().toEqualTypeOf<SettledUpload<"failed">>()
  })

  it("an export.completed or export.failed export is core's Export, its format and words core's", () => {
    expectTypeOf<WebhookExport<"ready">["format"]>().toEqualTypeOf<ExportFormat>()
    expectTypeOf<NonNullable<WebhookExport<"ready">["timed_lyrics"]>[number]>().toEqualTypeOf<
      Readonly<z.infer<typeof TimedWord>>
    >()
    expectTypeOf<WebhookExport<"ready">>().toEqualTypeOf<SettledExport<"ready">>()
    expectTypeOf<WebhookExport<"failed">>().toEqualTypeOf<SettledExport<"failed">>()
  })

  it("an upload and an export as events carry them are read by core's schemas unchanged", () => {
    const upload: WebhookUpload<"ready"> = {
      id: "upl_4fJ2kQ9xR1",
      status: "ready",
      title: "Demo",
      content_type: "audio/wav",
      bytes: 1_764_044,
      duration: 10,
      track_id: "trk_8aP0vN3mC6",
      analysis: {
        bpm: 120,
        key: "C major",
        time_signature: "4/4",
        loudness_lufs: -14.2,
        beats: [0.02, 0.52, 1.02],
        chords: [{ start: 0.02, end: 1.02, chord: "C" }]
      },
      error: null,
      created_at: "2026-01-02T03:04:05.000Z",
      updated_at: "2026-01-02T03:04:07.000Z"
    }
    expect(Upload.parse(upload)).toEqual(upload)
    const failedUpload: WebhookUpload<"failed"> = {
      ...upload,
      status: "failed",
      track_id: null,
      analysis: null,
      error: { code: "upload_undecodable", message: "The file could not be decoded." }
    }
    expect(Upload.parse(failedUpload)).toEqual(failedUpload)
    const exported: WebhookExport<"ready"> = {
      id: "exp_2bQ7cL1zW4",
      track_id: "trk_8aP0vN3mC6",
      task_id: "tsk_6yH3dS8uE5",
      format: "timed_lyrics",
      status: "ready",
      credits_used: 5,
      credits_refunded: 0,
      error: null,
      files: [
        {
          name: "track.lrc",
          url: "https://lyre.test/files/exp_2bQ7cL1zW4/track.lrc",
          content_type: "text/plain",
          bytes: 120,
          stem: null
        }
      ],
      timed_lyrics: [{ text: "Neon", start: 12.5, end: 12.9 }],
      created_at: "2026-01-02T03:04:05.000Z",
      updated_at: "2026-01-02T03:04:09.000Z"
    }
    expect(Export.parse(exported)).toEqual(exported)
  })

  it("every kind an endpoint subscribes to is described, and ping besides", () => {
    expectTypeOf<LyreEventType>().toEqualTypeOf<(typeof webhookEventTypes)[number] | "ping">()
  })
})
