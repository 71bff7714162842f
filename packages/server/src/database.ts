/**
 * The database: PostgreSQL at DATABASE_URL, or the embedded default, PGlite on disk under
 * DATA_DIR reached through its socket server by the very same client. PGlite is one Postgres
 * session, so its pool holds exactly one connection (two would interleave their messages).
 * Migrations run before anything else sees the client.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as Reactivity from "effect/reactivity/Reactivity"
import { fixedTextClient, WriteSql, runMigrations } from "@lyre/core"

/** A running embedded Postgres: where to reach it, and how to stop it. */
export interface EmbeddedPostgres {
  readonly host: string
  readonly port: number
  readonly stop: () => Promise<void>
}

/** Under `dataDir`, or with null in memory only (a test's database, gone when it stops). */
export const startEmbeddedPostgres = async (dataDir: string | null): Promise<EmbeddedPostgres> => {
  const directory = dataDir === null ? undefined : join(dataDir, "pglite")
  if (directory !== undefined) mkdirSync(directory, { recursive: true })
  const db = await PGlite.create(directory)
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
  await server.start()
  const [host = "127.0.0.1", port = "0"] = server.getServerConn().split(":")
  return {
    host,
    port: Number(port),
    stop: async () => {
      await server.stop()
      await db.close()
    }
  }
}

const embedded = (dataDir: string | null) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const pg = yield* Effect.acquireRelease(
        Effect.promise(() => startEmbeddedPostgres(dataDir)),
        (running) => Effect.promise(() => running.stop())
      )
      return PgClient.layer({
        host: pg.host,
        port: pg.port,
        database: "postgres",
        username: "postgres",
        maxConnections: 1,
        minConnections: 1,
        // PGlite answers from WebAssembly on this process's own event loop: under a busy CPU its
        // first answer can take far longer than a network server's.
        connectTimeout: "60 seconds",
        idleTimeout: "365 days"
      })
    })
  )

/**
 * How long opening a connection may take. While PostgreSQL is down a connection is refused at
 * once, so an outage is a 503 at once; only a host that drops packets waits for this bound. It
 * is not shorter because the bound also times a healthy server's fork and authentication, and
 * the timer runs on this process's event loop: on a loaded two-core machine a burst's new
 * connections took past 750 ms, and requests got 503 from a database that was there (record
 * 0134). libpq itself takes nothing under two seconds.
 */
const connectTimeout = "3 seconds"

/**
 * Multiplexing pipelines concurrent statements on each pooled connection in one write; on this
 * workload it doubles read throughput (socket writes were a third of the CPU). Transactions
 * still reserve a connection of their own.
 */
const external = (url: string, maxConnections: number) =>
  PgClient.layer({ url: Redacted.make(url), maxConnections, multiplex: true, connectTimeout })

/** The hot paths' writes (WriteSql) on connections of their own, one statement at a time each. */
const externalWrites = (url: string, maxConnections: number) =>
  Layer.effect(
    WriteSql,
    Effect.map(
      PgClient.make({ url: Redacted.make(url), maxConnections, connectTimeout }),
      (client): SqlClient => fixedTextClient(client)
    )
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The services' SqlClient keeps each statement's text from call to call (fixedTextClient,
 * decision 0113); PgClient, for LISTEN and NOTIFY, is the driver's own.
 */
const withFixedTexts = <E, R>(client: Layer.Layer<PgClient.PgClient | SqlClient, E, R>) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const pg = yield* PgClient.PgClient
      return Context.make(PgClient.PgClient, pg).pipe(Context.add(SqlClient, fixedTextClient<SqlClient>(pg)))
    })
  ).pipe(Layer.provide(client))

const migrated = Layer.effectDiscard(runMigrations)

/** SqlClient (and the PgClient under it, for LISTEN/NOTIFY) and WriteSql for the configured database, migrated. */
export const databaseLayer = (options: {
  readonly databaseUrl: string | null
  /** Where the embedded database keeps its files; null keeps it in memory. */
  readonly dataDir: string | null
  readonly maxConnections?: number
  readonly writeConnections?: number
}): Layer.Layer<SqlClient | PgClient.PgClient | WriteSql, unknown> => {
  const client = withFixedTexts(
    options.databaseUrl === null
      ? embedded(options.dataDir)
      : external(options.databaseUrl, options.maxConnections ?? 10)
  )
  const writes =
    options.databaseUrl === null
      ? WriteSql.sameClient
      : externalWrites(options.databaseUrl, options.writeConnections ?? 8)
  return Layer.merge(migrated, writes).pipe(Layer.provideMerge(client))
}
