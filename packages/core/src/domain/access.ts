import { Effect } from "effect"
import { TierInsufficient } from "./errors.ts"
import type { Plan } from "./models.ts"
import { planAllowsAccess } from "./pricing.ts"

/** The plan check of every credential, and of the dashboard's own API-key creation. */
export const requireAccessTier = (plan: Plan): Effect.Effect<void, TierInsufficient> =>
  planAllowsAccess(plan)
    ? Effect.void
    : Effect.fail(
        new TierInsufficient({ message: `API access requires the Pro plan or higher; this account is on ${plan}.` })
      )
