/**
 * The SQL client for the writes on the hot paths: the charge of a create, the record of its
 * submission, and the transitions that complete or refund a task.
 *
 * Reads share connections: the production pool pipelines many statements on each one, which
 * halves the socket writes per request. A write whose commit waits for the WAL flush would hold
 * up everything pipelined behind it, one flush after another on one server process, and the
 * writes would queue on that one process with the reads. On connections of their own, one
 * statement at a time each, their flush waits overlap, PostgreSQL groups their commits, and the
 * reads keep their pipelines. Where there is a single connection (PGlite), it is the same client.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export class WriteSql extends Context.Service<WriteSql, SqlClient>()("lyre/core/platform/WriteSql") {
  /** The one client there is, for both. */
  static readonly sameClient: Layer.Layer<WriteSql, never, SqlClient> = Layer.effect(
    WriteSql,
    Effect.gen(function* () {
      return yield* SqlClient
    })
  )
}
