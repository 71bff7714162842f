import { Layer } from "effect"
import { Ids } from "./domain/ids.ts"
import { TrackTasks } from "./generation/TrackTasks.ts"
import { Personas } from "./personas/Personas.ts"
import { AccessTokens } from "./services/AccessTokens.ts"
import { AccountConsole } from "./services/AccountConsole.ts"
import { Accounts } from "./services/Accounts.ts"
import { ApiKeys } from "./services/ApiKeys.ts"
import { Circuits } from "./services/Circuits.ts"
import { Generations } from "./services/Generations.ts"
import { Guard } from "./services/Guard.ts"
import { SigningKeys } from "./services/SigningKeys.ts"
import { Models } from "./services/Models.ts"
import { OAuth } from "./services/OAuth.ts"
import { Sessions } from "./services/Sessions.ts"
import { SongTools } from "./services/SongTools.ts"
import { Webhooks } from "./services/Webhooks.ts"
import { WebhookSignal } from "./services/WebhookSignal.ts"

/**
 * Core's services; they need a SqlClient, Settings, a RateLimiter, a DenyList and the Provider from the
 * composition root.
 */
export const coreLayer = Layer.mergeAll(Guard.layer, AccountConsole.layer, SongTools.layer, TrackTasks.layer, Personas.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Accounts.layer, ApiKeys.layer, Generations.layer, Models.layer, Sessions.layer, Webhooks.layer, OAuth.layer)),
  Layer.provideMerge(AccessTokens.layer),
  Layer.provideMerge(SigningKeys.layer),
  Layer.provideMerge(Layer.merge(Circuits.layer, WebhookSignal.layer)),
  Layer.provide(Ids.layer)
)
