/**
 * The SQL client for statements that wait for their commit to reach disk: the charge of a create
 * and the transitions that refund or complete a task.
 *
 * Reads share connections: the production pool pipelines many statements on each one, which
 * halves the socket writes per request. A statement whose commit waits for the WAL flush would
 * hold up everything pipelined behind it, one flush after another on one server process. On
 * connections of their own, these statements' flush waits overlap and PostgreSQL groups their
 * commits. Where there is a single connection (PGlite), it is the same client.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export class DurableSql extends Context.Service<DurableSql, SqlClient>()("lyre/core/services/DurableSql") {
  /** The one client there is, for both. */
  static readonly sameClient: Layer.Layer<DurableSql, never, SqlClient> = Layer.effect(
    DurableSql,
    Effect.gen(function*() {
      return yield* SqlClient
    })
  )
}
