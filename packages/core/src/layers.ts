import { Layer } from "effect"
import { Ids } from "./domain/ids.ts"
import { TrackTasks } from "./generation/TrackTasks.ts"
import { Personas } from "./personas/Personas.ts"
import { Lyrics } from "./lyrics/Lyrics.ts"
import { AccessTokens } from "./credentials/AccessTokens.ts"
import { AccountConsole } from "./credentials/AccountConsole.ts"
import { Accounts } from "./money/Accounts.ts"
import { ApiKeys } from "./credentials/ApiKeys.ts"
import { Circuits } from "./generation/Circuits.ts"
import { Generations } from "./generation/Generations.ts"
import { Guard } from "./credentials/Guard.ts"
import { SigningKeys } from "./credentials/SigningKeys.ts"
import { Models } from "./generation/Models.ts"
import { OAuth } from "./credentials/OAuth.ts"
import { Sessions } from "./credentials/Sessions.ts"
import { SongTools } from "./generation/SongTools.ts"
import { SubmissionBacklog } from "./generation/SubmissionBacklog.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"
import { WebhookSignal } from "./webhooks/WebhookSignal.ts"

/**
 * Core's services; they need a SqlClient, Settings, a RateLimiter, a DenyList and the Provider from the
 * composition root.
 */
export const coreLayer = Layer.mergeAll(
  Guard.layer,
  AccountConsole.layer,
  SongTools.layer,
  TrackTasks.layer,
  Personas.layer,
  Lyrics.layer
).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Accounts.layer,
      ApiKeys.layer,
      Generations.layer,
      Models.layer,
      Sessions.layer,
      Webhooks.layer,
      OAuth.layer
    )
  ),
  Layer.provideMerge(AccessTokens.layer),
  Layer.provideMerge(SigningKeys.layer),
  Layer.provideMerge(Layer.mergeAll(Circuits.layer, WebhookSignal.layer, SubmissionBacklog.layer())),
  Layer.provide(Ids.layer)
)
