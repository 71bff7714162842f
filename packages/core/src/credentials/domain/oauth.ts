/**
 * The authorization server's fixed rules: lifetimes, scopes in words, the resources a token may
 * be for, PKCE. docs/decisions/0039-oauth-lifetimes-audience-revocation-sessions.md says why each number is what it is.
 */
import { createHash } from "node:crypto"
import { scopeNames } from "../../domain/models.ts"
import type { Scope } from "../../domain/models.ts"

/** Access tokens (RFC 9068 JWTs) live 15 minutes. */
export const accessTokenLifetimeSeconds = 15 * 60
/** Authorization codes live 60 seconds and are good once. */
export const codeLifetimeSeconds = 60
/** A refresh token not used for 30 days expires... */
export const refreshIdleSeconds = 30 * 24 * 60 * 60
/** ...and a grant's refresh tokens stop at 90 days from sign-in whatever their use. */
export const refreshAbsoluteSeconds = 90 * 24 * 60 * 60

/** What the consent page says each scope lets the app do. */
export const scopeDescriptions: { readonly [S in Scope]: string } = {
  profile: "See your account: email, plan, credit balance and limits.",
  "music:generate": "Generate music with your credits, and see and list your generations.",
  "livecoding:agent": "Use the live-coding agent on your behalf.",
  "music:agent": "Use the music agent on your behalf.",
  "lyrics:agent": "Use the lyrics agent on your behalf."
}

/** An authorize request without `scope` gets this. */
export const defaultScopes: ReadonlyArray<Scope> = ["profile"]

const isScope = (value: string): value is Scope => (scopeNames as ReadonlyArray<string>).includes(value)

/** Parses a `scope` parameter; undefined when any value is not a scope we know. */
export const parseScopes = (value: string | null | undefined): ReadonlyArray<Scope> | undefined => {
  if (value === null || value === undefined) return defaultScopes
  const parts = value.split(" ").filter((part) => part.length > 0)
  if (parts.length === 0) return defaultScopes
  const scopes: Array<Scope> = []
  for (const part of parts) {
    if (!isScope(part)) return undefined
    if (!scopes.includes(part)) scopes.push(part)
  }
  return scopes
}

/** The resources (RFC 8707) a token may be for: the REST base, the MCP and the A2A endpoints. */
export const resourcesOf = (publicUrl: string): ReadonlyArray<string> => [
  `${publicUrl}/api`,
  `${publicUrl}/mcp`,
  `${publicUrl}/a2a`
]

/** RFC 7636 section 4.1: 43 to 128 unreserved characters. */
const verifierShape = /^[A-Za-z0-9\-._~]{43,128}$/
/** A S256 challenge is a base64url SHA-256: 43 characters. */
export const challengeShape = /^[A-Za-z0-9_-]{43}$/

export const pkceMatches = (verifier: string, challenge: string): boolean =>
  verifierShape.test(verifier) && createHash("sha256").update(verifier).digest("base64url") === challenge
