/**
 * The tRPC preset for first-party apps: the typed client of core's router at `{site}/trpc`,
 * authorized with an API key or an OAuth access token. When the server answers 401 (an access
 * token has expired, say), `onRefreshNeeded` is called once and the call is tried again with
 * the credential it gives, or with `getCredential`'s next answer.
 */
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client"
import type { TRPCClient, TRPCLink } from "@trpc/client"
import { observable } from "@trpc/server/observable"
import type { Unsubscribable } from "@trpc/server/observable"
import type { AppRouter } from "@lyre/core"
import { DEFAULT_BASE_URL, siteRootOf } from "./urls.ts"

export interface LyreTrpcClientOptions {
  /** The site root (or the API root: `/api` is dropped); default `http://127.0.0.1:8080`. */
  readonly baseUrl?: string
  /** A fixed API key or access token. */
  readonly credential?: string
  /** Asked before every request: the current credential (from a token store, say). */
  readonly getCredential?: () => string | undefined | Promise<string | undefined>
  /**
   * Called once when a call is refused with 401; answer the new access token (or nothing, when
   * `getCredential` will give it). The call is then retried once. Throw to give up.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a callback that only refreshes a store (`async () => { await store.refresh() }`) returns Promise<void>, which Promise<string | undefined> would refuse.
  readonly onRefreshNeeded?: () => string | undefined | void | Promise<string | undefined | void>
  readonly fetch?: typeof globalThis.fetch
}

export type LyreTrpcClient = TRPCClient<AppRouter>

const isUnauthorized = (error: unknown): boolean =>
  error instanceof TRPCClientError && (error.data as { httpStatus?: unknown } | undefined)?.httpStatus === 401

/** Retries a call refused with 401 once, after the refresher has run. */
const refreshLink =
  (refresh: () => Promise<void>): TRPCLink<AppRouter> =>
  () =>
  ({ op, next }) =>
    observable((observer) => {
      let subscription: Unsubscribable | undefined
      let stopped = false
      subscription = next(op).subscribe({
        next: (value) => observer.next(value),
        complete: () => observer.complete(),
        error: (error) => {
          if (!isUnauthorized(error)) return observer.error(error)
          refresh().then(
            () => {
              if (!stopped) subscription = next(op).subscribe(observer)
            },
            (cause: unknown) =>
              observer.error(TRPCClientError.from(cause instanceof Error ? cause : new Error(String(cause))))
          )
        }
      })
      return () => {
        stopped = true
        subscription?.unsubscribe()
      }
    })

export const createLyreTrpcClient = (options: LyreTrpcClientOptions = {}): LyreTrpcClient => {
  let refreshed: string | undefined
  const credential = async (): Promise<string | undefined> =>
    refreshed ?? (options.getCredential === undefined ? options.credential : await options.getCredential())
  const http = httpBatchLink<AppRouter>({
    url: `${siteRootOf(options.baseUrl ?? DEFAULT_BASE_URL)}/trpc`,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    headers: async () => {
      const value = await credential()
      return value === undefined ? {} : { authorization: `Bearer ${value}` }
    }
  })
  const onRefreshNeeded = options.onRefreshNeeded
  // The calls of one batch fail together: they share one refresh.
  let refreshing: Promise<void> | undefined
  const refresh = (): Promise<void> => {
    refreshing ??= (async () => {
      // A token handed back replaces the fixed one; without one, getCredential is asked anew.
      const next = await onRefreshNeeded?.()
      if (typeof next === "string") refreshed = next
    })().finally(() => (refreshing = undefined))
    return refreshing
  }
  const links = onRefreshNeeded === undefined ? [http] : [refreshLink(refresh), http]
  return createTRPCClient<AppRouter>({ links })
}
