/**
 * Tasks on a track (DESIGN.md section 11): a cover, vocals, an instrumental, an edit. Each is a
 * generation made from the track, exactly as an extension is: the body's fields over the
 * source's (generation/merge.ts), then Generations.create with the derivation attached, so its
 * price, check order, limits, idempotency key, state machine, refund and `job.*` events are a
 * generation's. What tells the kinds apart is a few lines each in `kinds` below: which body
 * fields are GenerateRequest's, what they force, and what is checked against the source.
 */
import { Context, Effect, Layer } from "effect"
import { z } from "zod"
import { InvalidParameter, TrackHasNoLyrics } from "../domain/errors.ts"
import type { PersonaNotFound, TrackNotFound } from "../domain/errors.ts"
import { GenerateRequestFields, TrackRequestFields } from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import type { RequestValidationError } from "../domain/validation.ts"
import type { DerivationKind, TrackDerivation } from "../provider/outcomes.ts"
import type { ChargeError } from "../money/charge.ts"
import { Generations } from "./Generations.ts"
import type { CreateOutcome } from "./Generations.ts"
import { mergedRequest } from "./merge.ts"
import { trackSources } from "./sources.ts"
import type { FoundTrack } from "./sources.ts"

const trackId = z.string().describe("The source track (`trk_...`), of a ready task of this account.")
const { style, lyrics } = GenerateRequestFields.shape

/** `POST /v1/music/tracks/{track_id}/covers`: the same song in a new style. */
export const CoverRequest = TrackRequestFields.extend({
  track_id: trackId,
  style: style.describe("The new style (genre, instruments, tempo, mood). A bpm here sets the cover's tempo."),
  audio_weight: TrackRequestFields.shape.audio_weight.describe(
    "0 to 1: how closely the cover follows the source's rhythm (1) or the new style's (0). Aether only."
  )
})
export type CoverRequest = z.infer<typeof CoverRequest>

/** `POST /v1/music/tracks/{track_id}/vocals`: a sung melody over the source, in its key and on its beat. */
export const VocalsRequest = TrackRequestFields.omit({ instrumental: true }).extend({
  track_id: trackId,
  lyrics: lyrics.unwrap().describe("The words to sing (at least one non-whitespace character).")
})
export type VocalsRequest = z.infer<typeof VocalsRequest>

/** `POST /v1/music/tracks/{track_id}/instrumentals`: an accompaniment for the source's sung melody. */
export const InstrumentalRequest = TrackRequestFields.omit({ instrumental: true, lyrics: true }).extend({
  track_id: trackId,
  style: style.describe("The style of the new accompaniment.")
})
export type InstrumentalRequest = z.infer<typeof InstrumentalRequest>

/** The shortest and longest span an edit makes again, in seconds. */
export const editSpanSeconds = { min: 2, max: 60 } as const

/** `POST /v1/music/tracks/{track_id}/edits`: one span made again, the rest the source's. */
export const EditRequest = TrackRequestFields.extend({
  track_id: trackId,
  start: z.number().min(0).describe("Seconds into the track where the span begins."),
  end: z
    .number()
    .positive()
    .describe(
      `Seconds into the track where the span ends: ${editSpanSeconds.min} to ${editSpanSeconds.max} after start, within the track.`
    ),
  lyrics: lyrics.describe("New words for the span; absent: the span is made again with the source's.")
})
export type EditRequest = z.infer<typeof EditRequest>

export interface TrackTaskInputs {
  readonly cover: CoverRequest
  readonly vocals: VocalsRequest
  readonly instrumental: InstrumentalRequest
  readonly edit: EditRequest
}

export type TrackTaskError = ChargeError | TrackNotFound | PersonaNotFound | RequestValidationError | TrackHasNoLyrics

/** One kind of task on a track: the GenerateRequest fields it gives, and its derivation of the source. */
interface TrackTaskKind<I> {
  /** The body's GenerateRequest fields, with what the kind forces. */
  readonly given: (input: I) => Readonly<Record<string, unknown>>
  /** The derivation, or why the source does not allow it. */
  readonly derive: (found: FoundTrack, input: I) => Effect.Effect<TrackDerivation, InvalidParameter | TrackHasNoLyrics>
}

const fieldsOf = (input: Readonly<Record<string, unknown>>, ...dropped: ReadonlyArray<string>) =>
  Object.fromEntries(Object.entries(input).filter(([name]) => name !== "track_id" && !dropped.includes(name)))

/**
 * Whether a track has a sung melody to accompany. An upload may well be a voice alone (what an
 * accompaniment is most asked for): what it holds was heard, not written, so its tune is taken.
 */
const sings = (found: FoundTrack): boolean =>
  found.source.upload !== undefined || (!found.request.instrumental && (found.request.lyrics ?? "").trim() !== "")

const spanOf = (found: FoundTrack, input: EditRequest): Effect.Effect<TrackDerivation, InvalidParameter> => {
  const length = input.end - input.start
  const duration = found.source.duration
  if (length < editSpanSeconds.min || length > editSpanSeconds.max) {
    return Effect.fail(
      new InvalidParameter({
        message: `end must be ${editSpanSeconds.min} to ${editSpanSeconds.max} seconds after start.`,
        param: "end"
      })
    )
  }
  if (duration !== null && input.end > duration) {
    return Effect.fail(
      new InvalidParameter({
        message: `end must be within the track (${duration} seconds).`,
        param: "end"
      })
    )
  }
  return Effect.succeed({ kind: "edit", source: found.source, start: input.start, end: input.end })
}

const kinds: { readonly [K in DerivationKind]: TrackTaskKind<TrackTaskInputs[K]> } = {
  cover: {
    given: (input) => fieldsOf(input),
    derive: (found) => Effect.succeed({ kind: "cover", source: found.source })
  },
  vocals: {
    given: (input) => ({ ...fieldsOf(input), instrumental: false }),
    derive: (found) => Effect.succeed({ kind: "vocals", source: found.source })
  },
  instrumental: {
    // The sung words stay the source's: the new accompaniment is composed for them.
    given: (input) => fieldsOf(input),
    derive: (found) =>
      sings(found)
        ? Effect.succeed({ kind: "instrumental", source: found.source })
        : Effect.fail(
            new TrackHasNoLyrics({
              message: "This track has no sung melody to accompany: add vocals to it instead.",
              param: "track_id"
            })
          )
  },
  edit: {
    given: (input) => ({
      ...fieldsOf(input, "start", "end"),
      ...(input.lyrics !== undefined && input.lyrics.trim() !== "" ? { instrumental: false } : {})
    }),
    derive: spanOf
  }
}

export class TrackTasks extends Context.Service<
  TrackTasks,
  {
    /** `POST /v1/music/tracks/{track_id}/{covers|vocals|instrumentals|edits}`: 202 a GenerationTask. */
    readonly create: <K extends DerivationKind>(
      kind: K,
      principal: Principal,
      input: TrackTaskInputs[K],
      idempotencyKey: string | undefined
    ) => Effect.Effect<CreateOutcome, TrackTaskError>
  }
>()("lyre/core/generation/TrackTasks") {
  static readonly layer = Layer.effect(
    TrackTasks,
    Effect.gen(function* () {
      const generations = yield* Generations
      const { findTrack } = yield* trackSources

      const create = Effect.fn("TrackTasks.create")(function* <K extends DerivationKind>(
        kind: K,
        principal: Principal,
        input: TrackTaskInputs[K],
        idempotencyKey: string | undefined
      ) {
        const config: TrackTaskKind<TrackTaskInputs[K]> = kinds[kind]
        const found = yield* findTrack(principal.accountId, input.track_id)
        const request = yield* mergedRequest(found.request, config.given(input), input)
        const derive = yield* config.derive(found, input)
        return yield* generations.create(principal, request, idempotencyKey, { derive })
      })

      return TrackTasks.of({ create })
    })
  )
}
