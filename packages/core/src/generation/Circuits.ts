/**
 * The provider circuit per model (DESIGN.md section 4): 5 provider failures within a minute open
 * it for 60 seconds, during which create answers 503 `model_unavailable` without charging. The
 * state is a row per model in the database, so every API process sees the same circuit, and one
 * conditional update records a failure (the row lock serializes concurrent recorders).
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Metrics } from "../observability/Metrics.ts"

export const circuitPolicy = {
  /** Failures within `windowSeconds` that open the circuit. */
  threshold: 5,
  windowSeconds: 60,
  /** How long an open circuit refuses the model. */
  openSeconds: 60
} as const

export class Circuits extends Context.Service<
  Circuits,
  {
    /** Counts one provider failure for the model; true when this one opened its circuit. */
    readonly recordFailure: (model: string) => Effect.Effect<boolean>
  }
>()("lyre/core/generation/Circuits") {
  static readonly layer = Layer.effect(
    Circuits,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const metrics = yield* Metrics
      const recordFailure = Effect.fn("Circuits.recordFailure")(function* (model: string) {
        const now = yield* Clock.currentTimeMillis
        const nowIso = new Date(now).toISOString()
        const cutoff = new Date(now - circuitPolicy.windowSeconds * 1000).toISOString()
        const openUntil = new Date(now + circuitPolicy.openSeconds * 1000).toISOString()
        const recent = sql`(
          select count(*) from unnest(c.failures || ${nowIso}::timestamptz) t where t > ${cutoff}::timestamptz
        )`
        const rows = yield* sql<{ opened: boolean }>`
          update model_circuits c
          set failures = case when ${recent} >= ${circuitPolicy.threshold} then '{}'::timestamptz[]
                         else array(select t from unnest(c.failures || ${nowIso}::timestamptz) t
                                    where t > ${cutoff}::timestamptz order by t) end,
              open_until = case when ${recent} >= ${circuitPolicy.threshold} then ${openUntil}::timestamptz
                           else c.open_until end
          where c.model = ${model}
          returning c.open_until = ${openUntil}::timestamptz as opened`.pipe(Effect.orDie)
        const opened = rows[0]?.opened ?? false
        if (opened) metrics.circuitOpened(model)
        return opened
      })
      return Circuits.of({ recordFailure })
    })
  )
}
