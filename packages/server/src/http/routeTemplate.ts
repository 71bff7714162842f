/**
 * The surface and route template of a request, for metrics and spans: never a raw path, so no
 * id, token or stray URL becomes a label. A path segment stays literal only when it is a word of
 * the service's own routes (the vocabulary below, and tRPC's procedure names); any other
 * segment is `{id}`, and paths deeper than the service's routes are cut at `/*`. Whatever a
 * client sends, the number of distinct routes stays bounded.
 */
import { procedurePaths } from "@lyre/core"

export interface RouteLabel {
  readonly surface: string
  readonly route: string
}

/** Words of the service's routes. A surface that adds routes adds its words here. */
const vocabulary = new Set([
  "v1",
  "me",
  "music",
  "generations",
  "tracks",
  "extensions",
  "exports",
  "openapi.json",
  "docs",
  "accounts",
  "keys",
  "credits",
  "ledger",
  "models",
  "webhook-endpoints",
  "webhook-deliveries",
  "deliveries",
  "attempts",
  "redeliver",
  "rotate-secret",
  "ping",
  "oauth-protected-resource",
  "oauth-authorization-server",
  "api-catalog",
  "mcp",
  "server-card.json",
  "agent-card.json",
  "jwks.json",
  "authorize",
  "token",
  "revoke",
  "register",
  "login",
  "logout",
  "consent",
  "internal",
  "provider",
  "callback",
  "webhooks",
  "history",
  "settings",
  "alerts",
  "sessions",
  "clients",
  "api",
  "a2a",
  "oauth-clients",
  "password",
  "signing-keys",
  "rotate",
  "signin",
  "signout"
])

const procedures = new Set(procedurePaths)

/** The first segment of a path and its surface. */
const surfaces: ReadonlyMap<string, string> = new Map([
  ["api", "rest"],
  ["trpc", "trpc"],
  ["mcp", "mcp"],
  ["a2a", "a2a"],
  ["oauth", "oauth"],
  ["admin", "admin"],
  ["files", "files"],
  [".well-known", "discovery"],
  ["dashboard", "dashboard"],
  ["signin", "session"],
  ["signout", "session"],
  ["internal", "callback"],
  ["healthz", "health"],
  ["readyz", "health"],
  ["metrics", "metrics"]
])

const maxDepth = 6

const label = (surface: string, route: string): RouteLabel => ({ surface, route })

/** The hot routes, answered without splitting the path. */
const exact: ReadonlyMap<string, RouteLabel> = new Map(
  [
    label("rest", "/api/v1/me"),
    label("rest", "/api/v1/music/generations"),
    label("rest", "/api/openapi.json"),
    label("health", "/healthz"),
    label("health", "/readyz"),
    label("metrics", "/metrics")
  ].map((known) => [known.route, known])
)
const generationById = label("rest", "/api/v1/music/generations/{id}")
const generationsPrefix = "/api/v1/music/generations/"
const files = label("files", "/files/*")
const other = label("other", "/*")

/**
 * The labeller of one request handler. Templates built by the generic path are kept, so each
 * distinct template is one object; there are few of them (see above).
 */
export const makeRouteLabeller = (): ((path: string) => RouteLabel) => {
  const built = new Map<string, RouteLabel>()
  const generic = (path: string): RouteLabel => {
    const segments = path.split("/")
    const surface = surfaces.get(segments[1] ?? "")
    if (surface === undefined) return other
    let route = ""
    for (let index = 1; index < segments.length; index++) {
      if (index > maxDepth) {
        route += "/*"
        break
      }
      const segment = segments[index] ?? ""
      if (index === 1 || vocabulary.has(segment)) route += `/${segment}`
      else if (surface === "trpc")
        route += procedures.has(segment) ? `/${segment}` : segment.includes(",") ? "/{batch}" : "/*"
      else route += segment === "" ? "/" : "/{id}"
    }
    const known = built.get(route)
    if (known !== undefined) return known
    const made = label(surface, route)
    built.set(route, made)
    return made
  }

  return (path: string): RouteLabel => {
    const known = exact.get(path)
    if (known !== undefined) return known
    if (path.startsWith(generationsPrefix) && path.indexOf("/", generationsPrefix.length) === -1) return generationById
    if (path.startsWith("/files/")) return files
    return generic(path)
  }
}
