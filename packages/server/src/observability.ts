/**
 * What a process measures and traces, from its configuration: the Prometheus registry (unless
 * `METRICS=off`) and the OTLP tracer (when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). Both are built
 * here, by the composition root, and reach the code that counts as services.
 */
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { instrumentProvider, Metrics, prometheusMetricsLayer, Provider } from "@lyre/core"
import type { ServerConfig } from "./config.ts"
import { tracingLayer } from "./telemetry.ts"

export const observabilityLayer = (config: ServerConfig): Layer.Layer<never, never, SqlClient> => {
  const metrics = config.metrics === "on" ? prometheusMetricsLayer(config) : Layer.empty
  const tracing =
    config.otlpEndpoint === null ? Layer.empty : tracingLayer({ endpoint: config.otlpEndpoint, serviceName: "lyre" })
  return Layer.merge(metrics, tracing)
}

/** The provider port with every call measured, when metrics are on. */
export const measuredProvider = <E, R>(layer: Layer.Layer<Provider, E, R>): Layer.Layer<Provider, E, R> =>
  Layer.effect(Provider)(
    Effect.gen(function* () {
      const provider = yield* Provider
      const metrics = yield* Metrics
      return metrics.enabled ? instrumentProvider(provider, metrics) : provider
    })
  ).pipe(Layer.provide(layer))
