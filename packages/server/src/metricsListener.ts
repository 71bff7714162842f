/**
 * `METRICS_PORT`: a listener that serves `/metrics` alone, for a process without the API's
 * listener (`pnpm worker`), so Prometheus scrapes every worker as it scrapes the API processes.
 */
import { Effect, Layer } from "effect"
import { Metrics, RouteNotFound } from "@lyre/core"
import { sendApiError, sendJson } from "@lyre/http"
import { makeMetricsEndpoint } from "./http/metricsEndpoint.ts"
import { listen } from "./http/server.ts"

export const metricsListenerLayer = (options: {
  readonly port: number
  readonly host: string
  readonly token: string | null
}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const context = yield* Effect.context<never>()
      const endpoint = makeMetricsEndpoint({
        metrics,
        token: options.token,
        render: () => Effect.runPromiseWith(context)(metrics.render)
      })
      const running = yield* Effect.acquireRelease(
        Effect.promise(() =>
          listen(
            async (req, res) => {
              const path = new URL(req.url ?? "/", "http://localhost").pathname
              if (path === "/metrics") return endpoint(req, res)
              req.resume()
              if (path === "/healthz") return sendJson(res, 200, { status: "ok" })
              sendApiError(res, new RouteNotFound({ message: `No route ${req.method} ${path}.` }), "")
            },
            options.port,
            options.host
          )
        ),
        (server) => Effect.promise(() => server.close())
      )
      yield* Effect.logInfo("metrics listening").pipe(Effect.annotateLogs({ port: running.port }))
    })
  )
