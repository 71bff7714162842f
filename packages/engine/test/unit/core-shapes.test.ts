/**
 * The engine names its shapes without depending on core (its package has no Lyre dependency);
 * the worker hands core's values to it as they are, an upload's stored listening above all.
 * These checks, made by the type checker, keep each copy equal to the shape core defines once,
 * and a sample of the engine's analysis is read by core's own schema as it stands.
 */
import { describe, expect, expectTypeOf, it } from "vitest"
import type { UploadContentType } from "@lyre/core/domain/contentTypes"
import { UploadAnalysis } from "@lyre/core/domain/listening"
import type { HeardVoice, Transcription as CoreTranscription } from "@lyre/core/domain/listening"
import type {
  ExportFormat as CoreExportFormat,
  ModelName as CoreModelName,
  TimedWord as CoreTimedWord
} from "@lyre/core/domain/models"
import type { DerivationKind, SourceTrack, UploadSource } from "@lyre/core/provider/outcomes"
import type { AudioType } from "../../src/listen/decode.ts"
import type { Analysis, ChordSpan, Transcription, VoiceProfile } from "../../src/listen/types.ts"
import type { EngineRequest, ExportFormat, ModelName, TimedWord, TrackDerivation, UploadRoot } from "../../src/types.ts"

/** Core's zod shapes infer mutable fields; the engine reads them only, so its copies are readonly throughout. */
type DeepReadonly<T> =
  T extends ReadonlyArray<infer E>
    ? ReadonlyArray<DeepReadonly<E>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T

describe("the engine's shapes are core's", () => {
  it("an upload's analysis, chord by chord", () => {
    expectTypeOf<Analysis>().toEqualTypeOf<DeepReadonly<UploadAnalysis>>()
    expectTypeOf<ChordSpan>().toEqualTypeOf<DeepReadonly<UploadAnalysis["chords"][number]>>()
  })

  it("an upload's transcription and the voice heard in it", () => {
    expectTypeOf<Transcription>().toEqualTypeOf<CoreTranscription>()
    expectTypeOf<VoiceProfile>().toEqualTypeOf<HeardVoice>()
  })

  it("an upload at the root of a track: its audio type, length and listening", () => {
    expectTypeOf<AudioType>().toEqualTypeOf<UploadContentType>()
    type Heard = "contentType" | "duration" | "analysis" | "transcription"
    expectTypeOf<Pick<UploadRoot, Heard>>().toEqualTypeOf<DeepReadonly<Pick<UploadSource, Heard>>>()
  })

  it("a request, the models, the song tools' kinds and formats, and a sung word", () => {
    expectTypeOf<EngineRequest>().toEqualTypeOf<Omit<SourceTrack["request"], "persona">>()
    expectTypeOf<ModelName>().toEqualTypeOf<CoreModelName>()
    expectTypeOf<TrackDerivation["kind"]>().toEqualTypeOf<DerivationKind>()
    expectTypeOf<ExportFormat>().toEqualTypeOf<CoreExportFormat>()
    expectTypeOf<TimedWord>().toEqualTypeOf<Readonly<CoreTimedWord>>()
  })

  it("an analysis as the engine writes it is read by core's schema unchanged", () => {
    const analysis: Analysis = {
      bpm: 92,
      key: "A minor",
      time_signature: "4/4",
      loudness_lufs: -13.8,
      beats: [0.41, 1.06, 1.71, 2.37],
      chords: [
        { start: 0.41, end: 1.71, chord: "Am" },
        { start: 1.71, end: 2.37, chord: "N" }
      ]
    }
    expect(UploadAnalysis.parse(analysis)).toEqual(analysis)
  })
})
