/**
 * The check order of every request, in one place: credential (401) -> plan (403) -> scope (403)
 * -> requests per minute (429). Body, model, concurrency and credit checks follow in the
 * procedures, in that order.
 */
import { Context, Effect, Layer } from "effect"
import { InsufficientScope, RpmExceeded } from "../domain/errors.ts"
import type { AuthenticationError, TierInsufficient } from "../domain/errors.ts"
import type { Scope } from "../domain/models.ts"
import { hasScope } from "../domain/principal.ts"
import type { Principal } from "../domain/principal.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { RateLimiter } from "./RateLimiter.ts"
import type { RateLimitDecision } from "./RateLimiter.ts"

export interface Admission {
  readonly principal: Principal
  readonly rateLimit: RateLimitDecision
}

export type AdmissionError = AuthenticationError | TierInsufficient | InsufficientScope | RpmExceeded

export class Guard extends Context.Service<Guard, {
  readonly admit: (
    authorization: string | undefined,
    requiredScope: Scope | undefined
  ) => Effect.Effect<Admission, AdmissionError>
}>()("lyre/core/services/Guard") {
  static readonly layer = Layer.effect(
    Guard,
    Effect.gen(function*() {
      const apiKeys = yield* ApiKeys
      const limiter = yield* RateLimiter
      const admit = Effect.fnUntraced(function*(
        authorization: string | undefined,
        requiredScope: Scope | undefined
      ) {
        const principal = yield* apiKeys.authenticate(authorization)
        if (requiredScope !== undefined && !hasScope(principal, requiredScope)) {
          return yield* new InsufficientScope({
            message: `This credential lacks the ${requiredScope} scope.`,
            scope: requiredScope
          })
        }
        const rateLimit = yield* limiter.hit(principal.subject, principal.requestsPerMinute)
        if (!rateLimit.allowed) {
          return yield* new RpmExceeded({
            message: `At most ${rateLimit.limit} requests per minute are allowed for this credential.`,
            retryAfterSeconds: rateLimit.retryAfterSeconds,
            limit: rateLimit.limit,
            resetAtSeconds: rateLimit.resetAtSeconds
          })
        }
        return { principal, rateLimit }
      })
      return Guard.of({ admit })
    })
  )
}
