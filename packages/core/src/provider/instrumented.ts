/**
 * The provider port, measured: every submit and record-info call observed by call, outcome and
 * latency, whichever provider is behind the port (the upstream over HTTP, the built-in engine).
 * The composition root wraps the provider with it once.
 */
import { Effect } from "effect"
import type { MetricsShape } from "../services/Metrics.ts"
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

export const instrumentProvider = (provider: Provider["Service"], metrics: MetricsShape): Provider["Service"] => ({
  name: provider.name,
  parseCallback: provider.parseCallback,
  submit: (submission) =>
    Effect.suspend(() => {
      const started = performance.now()
      return Effect.map(provider.submit(submission), (outcome) => {
        metrics.providerCall("submit", resultOf[outcome._tag], (performance.now() - started) / 1000)
        return outcome
      })
    }),
  poll: (providerTaskId) =>
    Effect.suspend(() => {
      const started = performance.now()
      return Effect.map(provider.poll(providerTaskId), (outcome) => {
        metrics.providerCall("record-info", resultOf[outcome._tag], (performance.now() - started) / 1000)
        return outcome
      })
    })
})
