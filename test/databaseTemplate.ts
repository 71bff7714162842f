/**
 * Vitest's global setup for the lanes that start the service: the database migrated once per
 * run, and copied for each test server rather than migrated again (about a second per server
 * on PostgreSQL, several on PGlite, with a hundred servers a run).
 *
 * - With DATABASE_URL: a database `lyre_template_<hash of the migrations>`, made once per set of
 *   migrations and kept between runs; each server's database is `create database ... template`.
 * - Without it: a PGlite data directory under the system's temporary directory, likewise named
 *   by the migrations' hash; each server copies it into its own DATA_DIR.
 *
 * The servers still run the migrations, which find nothing to do: a template older than the code
 * cannot be used, since its name changes with the migrations' text.
 */
import { createHash } from "node:crypto"
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { TestProject } from "vitest/node"
import { databaseLayer } from "../packages/server/src/database.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The migrated PostgreSQL database to copy (DATABASE_URL set), else null. */
    readonly lyreDatabaseTemplate: string | null
    /** The migrated PGlite data directory to copy (DATABASE_URL unset), else null. */
    readonly lyrePgliteTemplate: string | null
  }
}

const migrationsHash = (): string =>
  createHash("sha256")
    .update(readFileSync(join(import.meta.dirname, "..", "packages", "core", "src", "sql", "migrations.ts")))
    .digest("hex")
    .slice(0, 12)

const migrate = (options: { readonly databaseUrl: string | null; readonly dataDir: string }): Promise<void> =>
  Effect.runPromise(Effect.scoped(Layer.build(databaseLayer(options))).pipe(Effect.asVoid))

const onDatabase = <A>(url: string, program: Effect.Effect<A, unknown, SqlClient>): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(Effect.provide(program, PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )

const withDatabase = (baseUrl: string, name: string): string => {
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * Two runs may start at once (a person's and CI's): an advisory lock, held on the session that
 * creates the template, makes the second wait for the first's template rather than race it.
 */
const postgresTemplate = async (baseUrl: string, name: string): Promise<string> => {
  await onDatabase(
    baseUrl,
    SqlClient.use((sql) =>
      Effect.gen(function* () {
        yield* sql.unsafe("select pg_advisory_lock(727274)")
        const found = yield* sql.unsafe<{ datname: string }>("select datname from pg_database where datname = $1", [
          name
        ])
        if (found.length === 0) {
          yield* sql.unsafe(`drop database if exists ${name}_making with (force)`)
          yield* sql.unsafe(`create database ${name}_making`)
          yield* Effect.promise(() =>
            migrate({ databaseUrl: withDatabase(baseUrl, `${name}_making`), dataDir: tmpdir() })
          )
          // No connections to it from then on (autovacuum's included): a database being accessed
          // cannot be copied. Renamed only once whole, so a template that exists is migrated.
          yield* sql.unsafe(`alter database ${name}_making with is_template true allow_connections false`)
          yield* sql.unsafe(`alter database ${name}_making rename to ${name}`)
          yield* sql.unsafe(`comment on database ${name} is '${Date.now()}'`)
          // Templates of older migrations go once a day old: their names can never be asked for
          // again by this tree, but a run of another branch beside this one may be copying its own.
          const stale = yield* sql.unsafe<{ datname: string }>(
            `select datname from pg_database
              where datname like 'lyre_template_%' and datname <> $1
                and coalesce(nullif(shobj_description(oid, 'pg_database'), '')::bigint, 0) < $2`,
            [name, Date.now() - 24 * 3600 * 1000]
          )
          for (const row of stale) {
            yield* sql.unsafe(`alter database ${row.datname} is_template false`)
            yield* sql.unsafe(`drop database if exists ${row.datname} with (force)`)
          }
        }
        yield* sql.unsafe("select pg_advisory_unlock(727274)")
      })
    )
  )
  return name
}

/** A PGlite data directory, made in a directory of its own and renamed into place once whole. */
const pgliteTemplate = async (name: string): Promise<string> => {
  const directory = join(tmpdir(), name)
  if (existsSync(join(directory, "pglite", "PG_VERSION"))) return directory
  const making = mkdtempSync(join(tmpdir(), `${name}-making-`))
  await migrate({ databaseUrl: null, dataDir: making })
  try {
    renameSync(making, directory)
  } catch {
    // Another run put its own in place first: use that one.
    rmSync(making, { recursive: true, force: true })
  }
  return directory
}

export default async function databaseTemplate(project: TestProject): Promise<void> {
  const name = `lyre_template_${migrationsHash()}`
  const baseUrl = process.env["DATABASE_URL"] ?? null
  project.provide("lyreDatabaseTemplate", baseUrl === null ? null : await postgresTemplate(baseUrl, name))
  project.provide("lyrePgliteTemplate", baseUrl === null ? await pgliteTemplate(name) : null)
}

/** Copies the PGlite template into a server's DATA_DIR (where database.ts looks for it). */
export const copyPgliteTemplate = (template: string, dataDir: string): void =>
  cpSync(join(template, "pglite"), join(dataDir, "pglite"), { recursive: true })
