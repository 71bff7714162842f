/**
 * A database of its own for a test file, built as the service builds its own (the server's
 * `databaseLayer`, core's migrations): with DATABASE_URL set, a new PostgreSQL database made on
 * that server and dropped when the test is done; without it, PGlite. In a lane whose global setup
 * made the run's migrated template (test/databaseTemplate.ts), the database is a copy of it;
 * elsewhere PGlite runs in memory and the migrations run on the fresh database. So the same
 * tests run against both, and a rule that lives in SQL is tested in the SQL that holds it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { inject } from "vitest"
import { randomBase62 } from "@lyre/core"
import type { WriteSql } from "@lyre/core"
import { databaseLayer } from "@lyre/server/database"
import { copyPgliteTemplate } from "../databaseTemplate.ts"

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

/** A new database on the server at `serverUrl`, a copy of `template` if given: its URL, and how to drop it. */
export const createFreshDatabase = async (
  serverUrl: string,
  template: string | null
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const name = `lyre_test_${randomBase62(12).toLowerCase()}`
  await runOn(serverUrl, `create database ${name}${template === null ? "" : ` template ${template}`}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => runOn(serverUrl, `drop database if exists ${name} with (force)`)
  }
}

const postgres = (serverUrl: string) =>
  Effect.gen(function* () {
    const fresh = yield* Effect.acquireRelease(
      Effect.promise(() => createFreshDatabase(serverUrl, inject("lyreDatabaseTemplate") ?? null)),
      (database) => Effect.promise(() => database.drop())
    )
    return databaseLayer({ databaseUrl: fresh.url, dataDir: null, maxConnections: 4, writeConnections: 4 })
  })

/** PGlite: a copy of the lane's template in a directory removed afterwards, or else in memory. */
const pglite = Effect.gen(function* () {
  const template = inject("lyrePgliteTemplate") ?? null
  if (template === null) return databaseLayer({ databaseUrl: null, dataDir: null })
  const dataDir = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const made = mkdtempSync(join(tmpdir(), "lyre-core-test-"))
      copyPgliteTemplate(template, made)
      return made
    }),
    (made) => Effect.sync(() => rmSync(made, { recursive: true, force: true }))
  )
  return databaseLayer({ databaseUrl: null, dataDir })
})

/** SqlClient, PgClient and WriteSql on a fresh, migrated database, gone with the layer. */
export const testDatabaseLayer: Layer.Layer<SqlClient | PgClient.PgClient | WriteSql, unknown> = Layer.unwrap(
  postgresUrl === null ? pglite : postgres(postgresUrl)
)
