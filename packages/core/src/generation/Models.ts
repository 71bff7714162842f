/**
 * The operator's switch per model. Create reads it in the same statement that charges, so a
 * model marked unavailable is refused (503) without a charge, on every process at once.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ResourceNotFound } from "../domain/errors.ts"
import { ModelName } from "../domain/models.ts"

export interface ModelAvailabilityView {
  readonly model: ModelName
  readonly available: boolean
  readonly retry_after_seconds: number
}

const defaultRetryAfterSeconds = 60

export class Models extends Context.Service<
  Models,
  {
    readonly setAvailability: (
      model: string,
      change: { readonly available: boolean; readonly retry_after_seconds?: number | undefined }
    ) => Effect.Effect<ModelAvailabilityView, ResourceNotFound>
  }
>()("lyre/core/generation/Models") {
  static readonly layer = Layer.effect(
    Models,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const setAvailability = Effect.fn("Models.setAvailability")(function* (
        model: string,
        change: { readonly available: boolean; readonly retry_after_seconds?: number | undefined }
      ) {
        const parsed = ModelName.safeParse(model)
        if (!parsed.success) return yield* new ResourceNotFound({ message: `No model ${model}.` })
        const retryAfter = change.retry_after_seconds ?? defaultRetryAfterSeconds
        yield* sql`
          insert into model_status (model, available, retry_after_seconds)
          values (${parsed.data}, ${change.available}, ${retryAfter})
          on conflict (model) do update set available = excluded.available,
                                            retry_after_seconds = excluded.retry_after_seconds`.pipe(Effect.orDie)
        return { model: parsed.data, available: change.available, retry_after_seconds: retryAfter }
      })
      return Models.of({ setAvailability })
    })
  )
}
