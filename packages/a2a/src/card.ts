/**
 * The agent card at `/.well-known/agent-card.json`: what an A2A client reads to find the
 * endpoint, the skills, and how to authenticate. One description, two documents: the A2A 1.0
 * card (its ProtoJSON, `supportedInterfaces` naming 1.0 and 0.3 on `/a2a`) for a client that
 * asks with `A2A-Version: 1.0`, and otherwise the 0.3 card a 0.3 client reads (`url`,
 * `preferredTransport`, `protocolVersion`, ...) with the same `supportedInterfaces` beside it,
 * as the SDK's own compatibility layer serves it. Prices and models come from core.
 */
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER, AgentCard } from "@a2a-js/sdk"
import { A2A_LEGACY_PROTOCOL_VERSION } from "@a2a-js/sdk/compat/v0_3"
import {
  editSpanSeconds,
  exportFormats,
  exportPriceOf,
  maxInlineUploadBytes,
  maxUploadBytes,
  lyricsPrice,
  lyricsSectionNames,
  modelNames,
  priceOf,
  uploadContentTypes,
  uploadFetchTimeoutSeconds
} from "@lyre/core"
import type { Operation } from "./message.ts"

export const agentCardPath = "/.well-known/agent-card.json"

/** The interface's description version. */
const version = "0.1.0"

const name = "Lyre"

const description =
  "Lyre turns a style description, a title and lyrics into finished songs (two takes per request, " +
  "hosted MP3s), and extends a song or takes it as WAV, MIDI, stems or timed lyrics. It listens to your own audio, " +
  "covers it, adds vocals or an accompaniment, edits a span, and keeps a voice as a persona. Each paid request is " +
  "charged in credits on acceptance and refunded if it fails."

const scopeDescriptions = {
  "music:generate": "Generate music and read your generations",
  "lyrics:agent": "Use the lyrics agent",
  profile: "Read your account: plan, credits, limits"
} as const

const prices = modelNames.map((model) => `${model} ${priceOf[model]}`).join(", ")
const exportPrices = exportFormats.map((format) => `${format} ${exportPriceOf[format]}`).join(", ")

const inputModes = ["application/json", "text/plain"]
const megabytes = (bytes: number) => `${bytes / (1024 * 1024)} MB`

/** The end of every track task's description: the same track ids, price, answer and refund. */
const trackTaskTail =
  "Any generation field may be given (absent: the source's). track_id is a track (trk_...) of " +
  `your ready tasks or a ready upload's track_id. Charged as a generation of its model: ${prices}; refunded if it ` +
  "fails. The task completes as a generation does: one artifact per track."
const outputModes = ["audio/mpeg", "application/json"]

interface Skill {
  readonly id: Operation
  readonly name: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly examples: ReadonlyArray<string>
  /** What the skill's artifacts carry, when it is not the card's default (MP3s and JSON). */
  readonly outputModes?: ReadonlyArray<string>
  /** What the skill takes, when it is not the card's default (JSON and text). */
  readonly inputModes?: ReadonlyArray<string>
}

/** The skills, one row each; both documents are made from this table. */
const skills: ReadonlyArray<Skill> = [
  {
    id: "generate_music",
    name: "Generate music",
    description:
      "Send a data part with the generation request (style, title, lyrics; instrumental, model, " +
      "vocal_gender, negative_tags, style_weight, weirdness_constraint, audio_weight, persona_id), or text alone describing a " +
      `style, rendered as an instrumental titled from it. Credits per request: ${prices}. vocal_gender, ` +
      "negative_tags and the weights are aether only; nocturne is deprecated. The task completes with one " +
      "artifact per track: the MP3 as a file part and the track's fields as a data part.",
    tags: ["music", "song", "audio", "generation", "lyrics", "instrumental"],
    examples: [
      "lofi hip hop, 80 bpm, mellow piano, rain ambience",
      JSON.stringify({
        style: "synthwave, 110 bpm, dreamy",
        title: "Night Drive",
        lyrics: "[Verse]\nNeon on the water"
      })
    ]
  },
  {
    id: "extend_track",
    name: "Extend a track",
    description:
      'Send a data part with `operation: "extend_track"`, the `track_id` (trk_...) of a track of one of ' +
      "your ready tasks, `continue_at` (seconds into it, default its end) and any generation field (absent: the " +
      "source's). A new generation keeps the track up to continue_at and continues it in the same key, tempo and " +
      `voice. Charged as a generation of its model: ${prices}; refunded if it fails. The task completes as a ` +
      "generation does: one artifact per whole song (the MP3 as a file part, the track's fields as a data part).",
    tags: ["music", "song", "extend", "continuation"],
    examples: [
      JSON.stringify({
        operation: "extend_track",
        track_id: "trk_...",
        continue_at: 42,
        lyrics: "[Verse]\nThe city sleeps"
      })
    ]
  },
  {
    id: "export_track",
    name: "Export a track",
    description:
      'Send a data part with `operation: "export_track"`, the `track_id` (trk_...) of a track of one of ' +
      "your ready tasks and `format`: wav, midi, stems (one WAV per part) or timed_lyrics (each sung word with its " +
      `times, plus .lrc and WebVTT). Credits per format: ${exportPrices}; refunded if it fails; a format you ` +
      "already have ready is answered at once, charged nothing. timed_lyrics of an instrumental is refused " +
      "(track_has_no_lyrics). The task (exp_...) completes with one artifact: each file as a file part with its " +
      "media type and name, and the export as a data part.",
    tags: ["music", "export", "wav", "midi", "stems", "lyrics", "karaoke"],
    examples: [JSON.stringify({ operation: "export_track", track_id: "trk_...", format: "stems" })],
    outputModes: ["audio/wav", "audio/midi", "audio/mpeg", "text/vtt", "text/plain", "application/json"]
  },
  {
    id: "upload_audio",
    name: "Upload audio",
    description:
      "Send a file part: its bytes (at most " +
      megabytes(maxInlineUploadBytes) +
      ") or its URL, which " +
      "Lyre fetches from public addresses only (no loopback, private or link-local address, also after DNS and " +
      `redirects), at most ${megabytes(maxUploadBytes)}, within ${uploadFetchTimeoutSeconds} s; its media type one ` +
      `of ${uploadContentTypes.join(", ")}. A data part beside it may give a title. Or a data part alone with ` +
      '`operation: "upload_audio"` and `data` (base64) or `url`, `content_type`, `title`. Pro plan or higher, free ' +
      "of credits. A file that does not decode as what it says, or is under 5 s or over 8 min, is refused " +
      "(invalid_audio) and nothing is kept. The task (upl_...) completes once listened to, with one artifact: the " +
      "upload as data, its track_id for the track tasks and its analysis (bpm, key, beats, chords).",
    tags: ["audio", "upload", "analysis", "tempo", "key", "chords"],
    examples: [JSON.stringify({ operation: "upload_audio", url: "https://example.com/demo.mp3", title: "Demo" })],
    inputModes: [...uploadContentTypes, "application/json"],
    outputModes: ["application/json"]
  },
  {
    id: "cover_track",
    name: "Cover a track",
    description:
      'Send a data part with `operation: "cover_track"`, the `track_id` and the new `style` (required): ' +
      "the same song (melody, harmony, form, words) in that style; `audio_weight` (0 to 1) follows the source's " +
      `rhythm (1) or the new style's (0). ${trackTaskTail}`,
    tags: ["music", "cover", "restyle"],
    examples: [JSON.stringify({ operation: "cover_track", track_id: "trk_...", style: "bossa nova, nylon guitar" })]
  },
  {
    id: "add_vocals",
    name: "Add vocals",
    description:
      'Send a data part with `operation: "add_vocals"`, the `track_id` and `lyrics` (required): the ' +
      `source with the words sung over it, in its key and on its beat. ${trackTaskTail}`,
    tags: ["music", "vocals", "singing", "lyrics"],
    examples: [JSON.stringify({ operation: "add_vocals", track_id: "trk_...", lyrics: "[Verse]\nSing it back" })]
  },
  {
    id: "add_instrumental",
    name: "Add an accompaniment",
    description:
      'Send a data part with `operation: "add_instrumental"`, the `track_id` of a sung track and a ' +
      "`style` (required): an arrangement composed for its melody, mixed with it. A track made without vocals is refused " +
      `(track_has_no_lyrics); an upload is accompanied as heard. ${trackTaskTail}`,
    tags: ["music", "accompaniment", "arrangement", "instrumental"],
    examples: [JSON.stringify({ operation: "add_instrumental", track_id: "trk_...", style: "string quartet" })]
  },
  {
    id: "edit_track",
    name: "Edit a span",
    description:
      'Send a data part with `operation: "edit_track"`, the `track_id`, `start` and `end` (seconds, ' +
      `${editSpanSeconds.min} to ${editSpanSeconds.max} apart, within the track) and optionally new \`lyrics\` for the ` +
      `span: that span composed again, the rest the source sample for sample. ${trackTaskTail}`,
    tags: ["music", "edit", "replace section"],
    examples: [
      JSON.stringify({ operation: "edit_track", track_id: "trk_...", start: 30, end: 45, lyrics: "New words here" })
    ]
  },
  {
    id: "create_persona",
    name: "Make a persona",
    description:
      'Send a data part with `operation: "create_persona"`, a `track_id` of yours (a task\'s or an ' +
      "upload's), a `name` and a `description`: the voice and arrangement palette of that track, kept. Free. " +
      "Answered at once with a message (no task): the Persona as a data part; give its id as `persona_id` in any " +
      "generation or track task (aether).",
    tags: ["voice", "persona", "style"],
    examples: [
      JSON.stringify({
        operation: "create_persona",
        track_id: "trk_...",
        name: "Midnight",
        description: "Husky alto, lo-fi keys"
      })
    ],
    outputModes: ["application/json", "text/plain"]
  },
  {
    id: "lyrics",
    name: "Write lyrics",
    description:
      'Send a data part with `operation: "lyrics"` and a `prompt` (theme, mood, story; 1 to 1000 characters), ' +
      "optionally `style`, `title`, `language` (BCP 47) and `sections` in order (from " +
      `${lyricsSectionNames.join(", ")}); a \`track_id\` of yours to fit that track's melody; or \`lyrics\` with an ` +
      `\`instruction\` to revise them. Needs the lyrics:agent scope. ${lyricsPrice} credits; refunded if it fails. ` +
      "The task (lyt_...) completes with two artifacts, one per variation: its words as text (with [Verse], [Chorus] " +
      "headers, ready to send as a generation's lyrics) and the variation {title, text} as data.",
    tags: ["lyrics", "songwriting", "words", "rhyme"],
    examples: [
      JSON.stringify({ operation: "lyrics", prompt: "a harbour town at dusk", style: "folk" }),
      JSON.stringify({
        operation: "lyrics",
        prompt: "same song",
        lyrics: "[Verse]\n...",
        instruction: "make the chorus rhyme"
      })
    ],
    outputModes: ["text/plain", "application/json"]
  }
]

/** The protocol versions served on `/a2a`, newest first: a client picks the first it speaks. */
const protocolVersions = [A2A_PROTOCOL_VERSION, A2A_LEGACY_PROTOCOL_VERSION] as const

const apiKeyDescription =
  "A developer API key from the dashboard (Pro plan or higher), sent as `Authorization: Bearer`."
const oauthDescription = "Authorization code with PKCE (S256), for Lyre's first-party clients."

/** The A2A 1.0 card, as the SDK's request handler and version check read it. */
export const agentCard = (publicUrl: string): AgentCard => ({
  name,
  description,
  version,
  supportedInterfaces: protocolVersions.map((protocolVersion) => ({
    url: `${publicUrl}/a2a`,
    protocolBinding: "JSONRPC",
    tenant: "",
    protocolVersion
  })),
  provider: { organization: "Lyre", url: publicUrl },
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {
    apiKey: {
      scheme: {
        $case: "httpAuthSecurityScheme",
        value: { scheme: "bearer", bearerFormat: "lyr_live_...", description: apiKeyDescription }
      }
    },
    oauth2: {
      scheme: {
        $case: "oauth2SecurityScheme",
        value: {
          description: oauthDescription,
          oauth2MetadataUrl: `${publicUrl}/.well-known/oauth-authorization-server`,
          flows: {
            flow: {
              $case: "authorizationCode",
              value: {
                authorizationUrl: `${publicUrl}/oauth/authorize`,
                tokenUrl: `${publicUrl}/oauth/token`,
                refreshUrl: "",
                scopes: { ...scopeDescriptions },
                pkceRequired: true
              }
            }
          }
        }
      }
    }
  },
  securityRequirements: [{ schemes: { apiKey: { list: [] } } }, { schemes: { oauth2: { list: ["music:generate"] } } }],
  defaultInputModes: inputModes,
  defaultOutputModes: outputModes,
  skills: skills.map((skill) => ({
    id: skill.id,
    name: skill.name,
    description: skill.description,
    tags: [...skill.tags],
    examples: [...skill.examples],
    inputModes: [...(skill.inputModes ?? inputModes)],
    outputModes: [...(skill.outputModes ?? outputModes)],
    securityRequirements: []
  })),
  signatures: []
})

/** The 0.3 card, with the 1.0 interfaces beside it so a 1.0 client that did not ask still finds them. */
const legacyCard = (publicUrl: string, v1: Record<string, unknown>) => ({
  protocolVersion: "0.3.0",
  name,
  description,
  version,
  url: `${publicUrl}/a2a`,
  preferredTransport: "JSONRPC",
  additionalInterfaces: [{ url: `${publicUrl}/a2a`, transport: "JSONRPC" }],
  supportedInterfaces: v1["supportedInterfaces"],
  provider: { organization: "Lyre", url: publicUrl },
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: inputModes,
  defaultOutputModes: outputModes,
  skills: skills.map((skill) => ({
    ...skill,
    inputModes: skill.inputModes ?? inputModes,
    outputModes: skill.outputModes ?? outputModes
  })),
  securitySchemes: {
    apiKey: { type: "http", scheme: "bearer", bearerFormat: "lyr_live_...", description: apiKeyDescription },
    oauth2: {
      type: "oauth2",
      description: oauthDescription,
      oauth2MetadataUrl: `${publicUrl}/.well-known/oauth-authorization-server`,
      flows: {
        authorizationCode: {
          authorizationUrl: `${publicUrl}/oauth/authorize`,
          tokenUrl: `${publicUrl}/oauth/token`,
          scopes: scopeDescriptions
        }
      }
    }
  },
  security: [{ apiKey: [] }, { oauth2: ["music:generate"] }],
  supportsAuthenticatedExtendedCard: false
})

/**
 * The card's two documents, serialised once, and which one a request gets: the 1.0 card for
 * `A2A-Version: 1.0`, the 0.3 one otherwise (a request without the header is 0.3's, by the 1.0
 * specification). Answers vary by the header.
 */
export const agentCardDocuments = (publicUrl: string) => {
  const v1 = AgentCard.toJSON(agentCard(publicUrl))
  const v1Json = typeof v1 === "object" && v1 !== null ? { ...v1 } : {}
  const documents = { v1: JSON.stringify(v1Json), legacy: JSON.stringify(legacyCard(publicUrl, v1Json)) }
  return {
    vary: A2A_VERSION_HEADER,
    for: (requestedVersion: string | undefined): string =>
      requestedVersion?.trim() === A2A_PROTOCOL_VERSION ? documents.v1 : documents.legacy
  }
}
