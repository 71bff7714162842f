/**
 * The check order of every request, in one place: credential (401) -> plan (403) -> scope (403)
 * -> requests per minute (429). Body, model, concurrency and credit checks follow in the
 * procedures, in that order.
 */
import { Context, Effect, Layer } from "effect"
import { requireAccessTier } from "../domain/access.ts"
import { InsufficientScope, RpmExceeded } from "../domain/errors.ts"
import type { AuthenticationError, TierInsufficient } from "../domain/errors.ts"
import type { Scope } from "../domain/models.ts"
import { hasScope } from "../domain/principal.ts"
import type { Principal } from "../domain/principal.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { RateLimiter } from "../platform/RateLimiter.ts"
import type { RateLimitDecision } from "../platform/RateLimiter.ts"

export interface Admission {
  readonly principal: Principal
  readonly rateLimit: RateLimitDecision
}

export type AdmissionError = AuthenticationError | TierInsufficient | InsufficientScope | RpmExceeded

export class Guard extends Context.Service<
  Guard,
  {
    /** `resource` is the URL the calling surface serves (an access token's audience); absent: base_url. */
    readonly admit: (
      authorization: string | undefined,
      requiredScope: Scope | undefined,
      resource?: string | undefined
    ) => Effect.Effect<Admission, AdmissionError>
    /**
     * The same checks after the credential for a principal already identified another way (a
     * signed-in dashboard session): plan, scope, requests per minute.
     */
    readonly admitPrincipal: (
      principal: Principal,
      requiredScope: Scope | undefined
    ) => Effect.Effect<Admission, TierInsufficient | InsufficientScope | RpmExceeded>
  }
>()("lyre/core/credentials/Guard") {
  static readonly layer = Layer.effect(
    Guard,
    Effect.gen(function* () {
      const apiKeys = yield* ApiKeys
      const limiter = yield* RateLimiter
      /** Scope, then requests per minute: what follows the plan check for every credential. */
      const limit = Effect.fnUntraced(function* (principal: Principal, requiredScope: Scope | undefined) {
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
      const admit = Effect.fnUntraced(function* (
        authorization: string | undefined,
        requiredScope: Scope | undefined,
        resource?: string | undefined
      ) {
        // The credential and the plan: ApiKeys answers both, in that order.
        const principal = yield* apiKeys.authenticate(authorization, resource)
        return yield* limit(principal, requiredScope)
      })
      const admitPrincipal = Effect.fnUntraced(function* (principal: Principal, requiredScope: Scope | undefined) {
        yield* requireAccessTier(principal.plan)
        return yield* limit(principal, requiredScope)
      })
      return Guard.of({ admit, admitPrincipal })
    })
  )
}
