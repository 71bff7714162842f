/**
 * The connections a process opens to the provider's hosts (its API, the hosts of its files): one
 * pair of agents per process, shared by the provider's calls and every download, kept alive, and
 * at most `UPSTREAM_SOCKETS_PER_ORIGIN` to one origin, further requests waiting in the agent for
 * a free connection rather than opening another.
 *
 * Unbounded, a worker with 64 tasks in flight downloaded their four files each at once over as
 * many new connections: three workers and two API processes held about 730 connections to the
 * upstream. Their connects overflowed its accept queue (511), and the kernel dropped those it
 * had no room for, each tried again after 1, 2 or 4 s: time a submission spent out of its 10 s
 * limit before the upstream even read it (docs/decisions/0103-upstream-connections-bounded.md).
 */
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import type { OutgoingHttpHeaders, RequestOptions } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { Context, Effect, Layer } from "effect"

/** Connections to one origin per agent; about a worker's tasks in flight (`TaskWorker` concurrency). */
export const UPSTREAM_SOCKETS_PER_ORIGIN = 64

export interface UpstreamAgents {
  readonly http: HttpAgent
  readonly https: HttpsAgent
}

/**
 * One agent per scheme. `timeout` lets an idle connection go a second before the upstream's
 * `Keep-Alive: timeout=` hint, so a request rarely meets a connection the upstream has closed;
 * `lifo` reuses the warmest connection and lets the others idle out.
 */
export const makeUpstreamAgents = (): UpstreamAgents => {
  const options = {
    keepAlive: true,
    timeout: 5_000,
    scheduling: "lifo",
    maxSockets: UPSTREAM_SOCKETS_PER_ORIGIN
  } as const
  return { http: new HttpAgent(options), https: new HttpsAgent(options) }
}

/** How a request to one scheme is sent: node's request function and the process's agent for it. */
export interface Transport {
  readonly request: typeof httpRequest
  readonly agent: HttpAgent
}

/**
 * The transport of `url`'s scheme, shared by the provider's calls and the downloads; null for a
 * scheme other than http: and https:.
 */
export const transportFor = (url: URL, agents: UpstreamAgents): Transport | null =>
  url.protocol === "https:"
    ? { request: httpsRequest, agent: agents.https }
    : url.protocol === "http:"
      ? { request: httpRequest, agent: agents.http }
      : null

/**
 * What node:http needs of `url` to send one request, as a plain object: the scheme, host, port,
 * path with query, and credentials written in the URL, as node's own `urlToHttpOptions` reads
 * them. Given a `URL`, node makes its options with `urlToHttpOptions`, a null-prototype copy of
 * every field of the URL (a dictionary, not a shaped object), then copies that twice more
 * (`ClientRequest`, `Agent.addRequest`) on V8's slow path: a fifth of a download's instructions
 * (docs/decisions/0118-the-workers-own-instructions.md).
 */
export const requestOptionsOf = (
  url: URL,
  agent: HttpAgent,
  method: "GET" | "POST",
  headers?: OutgoingHttpHeaders
): RequestOptions => {
  const { hostname } = url
  const options: RequestOptions = {
    protocol: url.protocol,
    hostname: hostname.startsWith("[") ? hostname.slice(1, -1) : hostname,
    port: url.port === "" ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method,
    agent,
    headers
  }
  if (url.username !== "" || url.password !== "") {
    options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
  }
  return options
}

export const destroyUpstreamAgents = (agents: UpstreamAgents): void => {
  agents.http.destroy()
  agents.https.destroy()
}

/**
 * The process's agents, destroyed with the layer. One constant layer: every layer that provides
 * it within one build (the provider's, each worker's) shares the same agents.
 */
export class UpstreamConnections extends Context.Service<UpstreamConnections, UpstreamAgents>()(
  "lyre/worker/UpstreamConnections"
) {
  static readonly layer = Layer.effect(UpstreamConnections)(
    Effect.acquireRelease(Effect.sync(makeUpstreamAgents), (agents) => Effect.sync(() => destroyUpstreamAgents(agents)))
  )
}
