/**
 * A database of its own for a test file, built as the service builds its own (the server's
 * `databaseLayer`, core's migrations): with DATABASE_URL set, a new PostgreSQL database made on
 * that server and dropped when the test is done; without it, PGlite in memory. So the same tests
 * run against both, and a rule that lives in SQL is tested in the SQL that holds it.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBase62 } from "@lyre/core"
import type { WriteSql } from "@lyre/core"
import { databaseLayer } from "@lyre/server/database"

/** The server at DATABASE_URL, or null for PGlite. */
export const postgresUrl: string | null = process.env.DATABASE_URL || null

/** Runs one statement on the server at `url` (outside any test database). */
const runOn = (url: string, statement: string): Promise<void> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        SqlClient.use((sql) => sql.unsafe(statement)),
        PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
      )
    )
  ).then(() => undefined)

/** A new, empty database on the server at `serverUrl`: its URL, and how to drop it. */
export const createFreshDatabase = async (
  serverUrl: string
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const name = `lyre_test_${randomBase62(12).toLowerCase()}`
  await runOn(serverUrl, `create database ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => runOn(serverUrl, `drop database if exists ${name} with (force)`)
  }
}

/** SqlClient, PgClient and WriteSql on a fresh, migrated database, gone with the layer. */
export const testDatabaseLayer: Layer.Layer<SqlClient | PgClient.PgClient | WriteSql, unknown> = Layer.unwrap(
  Effect.gen(function* () {
    if (postgresUrl === null) return databaseLayer({ databaseUrl: null, dataDir: null })
    const serverUrl = postgresUrl
    const fresh = yield* Effect.acquireRelease(
      Effect.promise(() => createFreshDatabase(serverUrl)),
      (database) => Effect.promise(() => database.drop())
    )
    return databaseLayer({ databaseUrl: fresh.url, dataDir: null, maxConnections: 4, writeConnections: 4 })
  })
)
