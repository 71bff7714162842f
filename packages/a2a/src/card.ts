/**
 * The agent card at `/.well-known/agent-card.json`: what an A2A client reads to find the
 * endpoint, the skill, and how to authenticate. Prices and models come from core; the server
 * serves it with the other discovery documents.
 */
import type { AgentCard } from "@a2a-js/sdk"
import { modelNames, priceOf } from "@lyre/core"

export const agentCardPath = "/.well-known/agent-card.json"

/** The interface's description version. */
const version = "0.1.0"

const scopeDescriptions = {
  "music:generate": "Generate music and read your generations",
  profile: "Read your account: plan, credits, limits"
} as const

const prices = modelNames.map((model) => `${model} ${priceOf[model]}`).join(", ")

export const agentCard = (publicUrl: string): AgentCard => ({
  protocolVersion: "0.3.0",
  name: "Lyre",
  description: "Lyre turns a style description, a title and lyrics into finished songs (two takes per request, " +
    "hosted MP3s). Each request is charged in credits on acceptance and refunded if the generation fails.",
  version,
  url: `${publicUrl}/a2a`,
  preferredTransport: "JSONRPC",
  additionalInterfaces: [{ url: `${publicUrl}/a2a`, transport: "JSONRPC" }],
  provider: { organization: "Lyre", url: publicUrl },
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: ["application/json", "text/plain"],
  defaultOutputModes: ["audio/mpeg", "application/json"],
  skills: [
    {
      id: "generate_music",
      name: "Generate music",
      description: "Send a data part with the generation request (style, title, lyrics; instrumental, model, " +
        "vocal_gender, negative_tags, style_weight, weirdness_constraint, audio_weight), or text alone describing a " +
        `style, rendered as an instrumental titled from it. Credits per request: ${prices}. vocal_gender, ` +
        "negative_tags and the weights are aether only; nocturne is deprecated. The task completes with one " +
        "artifact per track: the MP3 as a file part and the track's fields as a data part.",
      tags: ["music", "song", "audio", "generation", "lyrics", "instrumental"],
      examples: [
        "lofi hip hop, 80 bpm, mellow piano, rain ambience",
        JSON.stringify({ style: "synthwave, 110 bpm, dreamy", title: "Night Drive", lyrics: "[Verse]\nNeon on the water" })
      ],
      inputModes: ["application/json", "text/plain"],
      outputModes: ["audio/mpeg", "application/json"]
    }
  ],
  securitySchemes: {
    apiKey: {
      type: "http",
      scheme: "bearer",
      bearerFormat: "lyr_live_...",
      description: "A developer API key from the dashboard (Pro plan or higher), sent as `Authorization: Bearer`."
    },
    oauth2: {
      type: "oauth2",
      description: "Authorization code with PKCE (S256), for Lyre's first-party clients.",
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
