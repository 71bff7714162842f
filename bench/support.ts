/** What the benchmark scripts share: SQL on a database by URL, free ports, percentiles. */
import { createServer } from "node:net"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export const runOn = <A>(url: string, program: Effect.Effect<A, unknown, SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(program, PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))))

export const query = <A extends object>(url: string, text: string, ...params: ReadonlyArray<unknown>) =>
  runOn(url, SqlClient.use((sql) => sql.unsafe<A>(text, [...params])))

export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })

export const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
