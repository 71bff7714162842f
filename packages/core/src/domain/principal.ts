import type { Plan, Scope } from "./models.ts"

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
