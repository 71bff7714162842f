import { Layer } from "effect"
import { Ids } from "./domain/ids.ts"
import { Accounts } from "./services/Accounts.ts"
import { ApiKeys } from "./services/ApiKeys.ts"
import { Circuits } from "./services/Circuits.ts"
import { Generations } from "./services/Generations.ts"
import { Guard } from "./services/Guard.ts"
import { Models } from "./services/Models.ts"
import { Webhooks } from "./services/Webhooks.ts"
import { WebhookSignal } from "./services/WebhookSignal.ts"

/**
 * Core's services; they need a SqlClient, Settings, a RateLimiter and the Provider from the
 * composition root.
 */
export const coreLayer = Guard.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Accounts.layer, ApiKeys.layer, Generations.layer, Models.layer, Webhooks.layer)),
  Layer.provideMerge(Layer.merge(Circuits.layer, WebhookSignal.layer)),
  Layer.provide(Ids.layer)
)
