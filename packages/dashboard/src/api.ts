/**
 * The typed tRPC client of core's router, over the session cookie. Every change carries the
 * session's CSRF token, which the page reads once from `account.session`.
 */
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client"
import type { AppRouter, RouterOutputs } from "@lyre/core/trpc/router"

let csrfToken: string | null = null

export const setCsrfToken = (token: string): void => {
  csrfToken = token
}

/** The session's CSRF token, for the one call not made through the tRPC client (tools/upload.ts). */
export const currentCsrfToken = (): string | null => csrfToken

export const api = createTRPCClient<AppRouter>({
  links: [
    httpBatchLink({
      url: "/trpc",
      headers: () => (csrfToken === null ? {} : { "x-csrf-token": csrfToken }),
      fetch: (url, options) => fetch(url, { ...options, credentials: "include" })
    })
  ]
})

export type Outputs = RouterOutputs

/** The interface's error envelope, as every surface renders it. */
export interface ApiProblem {
  readonly type: string
  readonly code: string
  readonly message: string
  readonly param?: string
}

export const isProblem = (u: unknown): u is ApiProblem =>
  typeof u === "object" && u !== null && "code" in u && "message" in u && typeof u.message === "string"

/** The envelope behind a failed call (or a generic one when the network itself failed). */
export const problemOf = (error: unknown): ApiProblem => {
  if (error instanceof TRPCClientError) {
    const data: unknown = error.data
    const envelope = typeof data === "object" && data !== null && "error" in data ? data.error : undefined
    if (isProblem(envelope)) return envelope
    return { type: "api_error", code: "network_error", message: error.message }
  }
  return { type: "api_error", code: "network_error", message: String(error) }
}

export const signInUrl = (): string => `/signin?return_to=${encodeURIComponent(location.pathname + location.search)}`

/** Sends the browser to sign in when the session is missing or over. */
export const isSignedOut = (problem: ApiProblem): boolean => problem.type === "authentication_error"

export const formatDate = (iso: string | null): string =>
  iso === null ? "—" : new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })
