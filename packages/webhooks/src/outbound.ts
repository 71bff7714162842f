/**
 * The address rule for every request Lyre sends to a URL an account gave it (a webhook
 * endpoint, an upload fetched from a URL): http or https only, and unless the operator allows
 * them (development and tests), no loopback, private, link-local or otherwise non-public
 * address, checked on the IP literal and, for a name, on the address the socket connects to.
 */
import { lookup as dnsLookup } from "node:dns"
import type { LookupAddress } from "node:dns"
import http from "node:http"
import https from "node:https"
import { isIP } from "node:net"
import type { LookupFunction } from "node:net"
import { isPrivateAddress } from "./address.ts"

/** The `code` a refused lookup fails the request with. */
export const PRIVATE_ADDRESS = "ERR_WEBHOOK_PRIVATE_ADDRESS"

const codedError = (code: string, message: string): NodeJS.ErrnoException => Object.assign(new Error(message), { code })

/**
 * Resolves the name and hands the socket only public addresses. Because it runs inside the
 * connection itself, the address checked is the address connected to: a DNS answer that
 * changes between a check and the connect (rebinding) cannot get around it.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: ReadonlyArray<LookupAddress>) => {
    if (error) return callback(error, "")
    const allowed = addresses.filter((entry) => !isPrivateAddress(entry.address))
    const first = allowed[0]
    if (first === undefined) {
      const seen = addresses.map((entry) => entry.address).join(", ")
      return callback(codedError(PRIVATE_ADDRESS, `${hostname} resolves only to non-public addresses (${seen})`), "")
    }
    if (options.all === true) return callback(null, allowed)
    callback(null, first.address, first.family)
  })
}

// Keep-alive pools, one per policy, so that a socket opened while private addresses were
// allowed is never reused by a request that forbids them.
const agents = {
  public: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
  private: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }
}

export type OutboundRefusal =
  | { readonly code: "invalid_url"; readonly message: string }
  | { readonly code: "private_address"; readonly message: string }

/** What to send a request with: the URL, its transport, and the options that enforce the rule. */
export interface OutboundTarget {
  readonly url: URL
  readonly transport: typeof http | typeof https
  readonly options: Pick<http.RequestOptions, "agent" | "lookup">
}

/**
 * Checks `raw` against the rule and answers how to reach it, or why not. Every hop of a
 * redirect a caller follows must come through here again.
 */
export const outboundTarget = (
  raw: string,
  allowPrivate: boolean,
  purpose = "receive webhooks"
):
  | { readonly ok: true; readonly target: OutboundTarget }
  | { readonly ok: false; readonly refusal: OutboundRefusal } => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, refusal: { code: "invalid_url", message: `Not a URL: ${raw}` } }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      refusal: { code: "invalid_url", message: `Only http and https URLs ${purpose}, not ${url.protocol}` }
    }
  }
  // Node connects to IP literals without calling `lookup`, so they are checked here.
  const literal = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  if (!allowPrivate && isIP(literal) !== 0 && isPrivateAddress(literal)) {
    return { ok: false, refusal: { code: "private_address", message: `${literal} is not a public address` } }
  }
  const pool = allowPrivate ? agents.private : agents.public
  return {
    ok: true,
    target: {
      url,
      transport: url.protocol === "https:" ? https : http,
      options: {
        agent: url.protocol === "https:" ? pool.https : pool.http,
        ...(allowPrivate ? {} : { lookup: publicOnlyLookup })
      }
    }
  }
}
