/**
 * The provider port, measured: every submit and record-info call observed by call, outcome and
 * latency, whichever provider is behind the port (the upstream over HTTP, the built-in engine).
 * The composition root wraps the provider with it once.
 */
import { Effect } from "effect"
import type { MetricsShape, ProviderCall } from "../observability/Metrics.ts"
import type { PollOutcome, SubmitOutcome } from "./outcomes.ts"
import type { Provider } from "./Provider.ts"

/** The outcome tags as label values, without building a string per call. */
const resultOf: Readonly<Record<SubmitOutcome["_tag"] | PollOutcome["_tag"], string>> = {
  Accepted: "accepted",
  Rejected: "rejected",
  Unknown: "unknown",
  Pending: "pending",
  Succeeded: "succeeded",
  Failed: "failed"
}

/** Times one provider call and counts it under `call`, labelled with its outcome. */
const observed = <O extends { readonly _tag: keyof typeof resultOf }>(
  metrics: MetricsShape,
  call: ProviderCall,
  make: () => Effect.Effect<O>
): Effect.Effect<O> =>
  Effect.suspend(() => {
    const started = performance.now()
    return Effect.map(make(), (outcome) => {
      metrics.providerCall(call, resultOf[outcome._tag], (performance.now() - started) / 1000)
      return outcome
    })
  })

export const instrumentProvider = (provider: Provider["Service"], metrics: MetricsShape): Provider["Service"] => ({
  name: provider.name,
  parseCallback: provider.parseCallback,
  submit: (submission) => observed(metrics, "submit", () => provider.submit(submission)),
  poll: (providerTaskId) => observed(metrics, "record-info", () => provider.poll(providerTaskId)),
  submitExport: (submission) => observed(metrics, "export-submit", () => provider.submitExport(submission)),
  pollExport: (providerExportId, format) =>
    observed(metrics, "export-record-info", () => provider.pollExport(providerExportId, format))
})
