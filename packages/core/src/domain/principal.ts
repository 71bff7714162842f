import type { Plan, Scope } from "./models.ts"
import { defaultConcurrencyLimit } from "./pricing.ts"

/** Who is calling, resolved from a credential once per request. */
export interface Principal {
  readonly accountId: string
  readonly plan: Plan
  readonly scopes: ReadonlyArray<string>
  readonly credential:
    | { readonly kind: "api_key"; readonly keyId: string; readonly name: string; readonly expiresAt: Date | null }
    | { readonly kind: "oauth"; readonly clientId: string }
  /** What rate and concurrency limits are counted against: the key, or the account and client. */
  readonly subject: string
  readonly requestsPerMinute: number
  readonly concurrencyLimit: number
  readonly balance: { readonly subscription: number; readonly onetime: number }
}

export const hasScope = (principal: Principal, scope: Scope): boolean => principal.scopes.includes(scope)

/** The account columns every credential is read with: plan, balances and limit overrides. */
export interface AccountStanding {
  readonly plan: Plan
  readonly subscription_credits: number
  readonly onetime_credits: number
  readonly concurrency_limit: number | null
  readonly requests_per_minute: number | null
}

/** The caller: who the credential names, with the account's plan, balances and effective limits. */
export const principalOf = (
  accountId: string,
  account: AccountStanding,
  caller: Pick<Principal, "scopes" | "credential" | "subject">,
  defaultRequestsPerMinute: number
): Principal => ({
  accountId,
  plan: account.plan,
  ...caller,
  requestsPerMinute: account.requests_per_minute ?? defaultRequestsPerMinute,
  concurrencyLimit: account.concurrency_limit ?? defaultConcurrencyLimit(account.plan),
  balance: { subscription: account.subscription_credits, onetime: account.onetime_credits }
})
