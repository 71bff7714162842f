/**
 * Lyrics from an OpenAI-compatible chat completions server (`LYRICS_MODEL_URL`, `LYRICS_MODEL`,
 * `LYRICS_MODEL_KEY`): the interface that llama.cpp's server, vLLM, Ollama and the hosted APIs
 * share. One `POST {LYRICS_MODEL_URL}/chat/completions` per task, asking for JSON matching a
 * schema (`response_format: json_schema`, strict), bounded by a time-out. The answer is validated
 * before anything is kept: a refusal is `content_policy`; an error status, a time-out, a broken
 * connection, an answer cut short, or content that is not JSON of the schema is `lyrics_failed`.
 * Either fails the task, refunded: the caller may simply ask again.
 */
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { LyricsWriter } from "@lyre/core"
import type { LyricsJob, LyricsStep } from "@lyre/core"
import { briefLines } from "./brief.ts"

export interface ChatLyricsWriterConfig {
  /** The server's OpenAI-compatible base URL (`http://127.0.0.1:8080/v1`); `/chat/completions` is appended. */
  readonly url: string
  readonly model: string
  /** Sent as `Authorization: Bearer ...` when set. */
  readonly apiKey: Redacted.Redacted<string> | null
  /** Connect to last byte. */
  readonly timeoutMs: number
}

/** What the model must answer: exactly two variations, each a title and its words. */
export const lyricsJsonSchema = {
  type: "object",
  properties: {
    variations: {
      type: "array",
      minItems: 2,
      maxItems: 2,
      items: {
        type: "object",
        properties: { title: { type: "string" }, text: { type: "string" } },
        required: ["title", "text"],
        additionalProperties: false
      }
    }
  },
  required: ["variations"],
  additionalProperties: false
} as const

const systemPrompt = [
  "You are a lyricist. Write song lyrics for the brief you are given.",
  "Answer with JSON only, matching the schema: two variations, each a title and its text.",
  "Each text uses section headers on lines of their own, such as [Verse], [Pre-Chorus], [Chorus], [Bridge], [Outro],",
  "and holds only words to be sung under them: no notes, chords or commentary. At most 3000 characters each."
].join(" ")

const Completion = Schema.Struct({
  choices: Schema.NonEmptyArray(
    Schema.Struct({
      finish_reason: Schema.optional(Schema.NullOr(Schema.String)),
      message: Schema.Struct({
        content: Schema.optional(Schema.NullOr(Schema.String)),
        refusal: Schema.optional(Schema.NullOr(Schema.String))
      })
    })
  )
})
const decodeCompletion = Schema.decodeUnknownOption(Completion)

const Drafts = Schema.Struct({
  variations: Schema.Array(Schema.Struct({ title: Schema.String, text: Schema.String }))
})
const decodeDrafts = Schema.decodeUnknownOption(Drafts)

const failed = (code: string, detail: string): LyricsStep => ({ _tag: "Failed", code, detail })

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** What the server's answer says: the drafts, or why not. */
export const readCompletion = (status: number, text: string): LyricsStep => {
  if (status < 200 || status > 299) return failed("lyrics_failed", `the model server answered HTTP ${status}`)
  const completion = decodeCompletion(parseJson(text))
  if (Option.isNone(completion)) return failed("lyrics_failed", "the model server's answer is not a chat completion")
  const [choice] = completion.value.choices
  const refusal = choice.message.refusal
  if ((refusal !== undefined && refusal !== null && refusal !== "") || choice.finish_reason === "content_filter") {
    return failed("content_policy", `the model refused: ${refusal ?? choice.finish_reason}`)
  }
  if (choice.finish_reason === "length") return failed("lyrics_failed", "the model's answer was cut short")
  const drafts = decodeDrafts(parseJson(choice.message.content ?? ""))
  if (Option.isNone(drafts)) return failed("lyrics_failed", "the model's content is not JSON of the lyrics schema")
  return { _tag: "Written", variations: drafts.value.variations }
}

export const chatLyricsWriterLayer = (config: ChatLyricsWriterConfig): Layer.Layer<LyricsWriter> =>
  Layer.succeed(LyricsWriter)(
    LyricsWriter.of({
      name: "model",
      step: (job: LyricsJob) =>
        Effect.promise(async (): Promise<LyricsStep> => {
          const body = JSON.stringify({
            model: config.model,
            messages: [
              { role: "system", content: systemPrompt },
              { role: "user", content: briefLines(job).join("\n") }
            ],
            response_format: {
              type: "json_schema",
              json_schema: { name: "lyrics", strict: true, schema: lyricsJsonSchema }
            },
            temperature: 0.8
          })
          try {
            const answer = await fetch(`${config.url.replace(/\/+$/, "")}/chat/completions`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                ...(config.apiKey === null ? {} : { authorization: `Bearer ${Redacted.value(config.apiKey)}` })
              },
              body,
              signal: AbortSignal.timeout(config.timeoutMs)
            })
            return readCompletion(answer.status, await answer.text())
          } catch (error) {
            const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")
            return failed(
              "lyrics_failed",
              timedOut
                ? `the model server did not answer within ${config.timeoutMs} ms`
                : `the model server could not be reached: ${error instanceof Error ? error.message : String(error)}`
            )
          }
        })
    })
  )
