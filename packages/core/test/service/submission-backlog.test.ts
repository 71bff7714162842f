/**
 * The bound on what a process keeps of submission outcomes the database did not take. The
 * database here is a flag: up, a record runs; away, it fails as a lost PostgreSQL does (an
 * SqlError whose reason is a ConnectionError). The path through the real recorder, PostgreSQL
 * and the worker is `faults-postgres.test.ts` in the server package.
 */
import { afterEach, describe, expect, it } from "vitest"
import { Clock, Effect, Layer, Logger, ManagedRuntime, References } from "effect"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { Metrics, noopMetrics, SubmissionBacklog } from "../../src/index.ts"
import type { BacklogPolicy, KeptOutcome, KeptSubmissionResult } from "../../src/index.ts"

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

const lost = new SqlError({
  reason: new ConnectionError({
    cause: new Error("connect ECONNREFUSED"),
    message: "PgClient: Failed to connect",
    operation: "connect"
  })
})

const quickPolicy: BacklogPolicy = { maxKept: 2, retryMillis: 10, maxRetryMillis: 40, lastRoundMillis: 200 }

/** A backlog on its own runtime, a database that is a flag, and what it logged and counted. */
const makeBed = (policy: BacklogPolicy = quickPolicy) => {
  const database = { up: false }
  const recorded: Array<string> = []
  const tries = new Map<string, number>()
  const lines: Array<Line> = []
  const results: Array<KeptSubmissionResult> = []
  const gauge = { kept: 0 }
  const logger = Logger.make((options) => {
    const message = Array.isArray(options.message) ? options.message[0] : options.message
    lines.push({
      level: options.logLevel,
      message: String(message),
      annotations: { ...options.fiber.getRef(References.CurrentLogAnnotations) }
    })
  })
  const metrics = Layer.succeed(Metrics)({
    ...noopMetrics,
    keptSubmission: (result) => {
      results.push(result)
    },
    keptSubmissions: (count) => {
      gauge.kept = count
    }
  })
  const runtime = ManagedRuntime.make(
    SubmissionBacklog.layer(policy).pipe(Layer.provideMerge(Layer.merge(metrics, Logger.layer([logger]))))
  )
  const outcome = (id: string, untilInMillis = 60_000, record?: Effect.Effect<void>): Effect.Effect<KeptOutcome> =>
    Effect.map(Clock.currentTimeMillis, (now) => ({
      noun: "task" as const,
      id,
      until: now + untilInMillis,
      record:
        record ??
        Effect.suspend(() => {
          tries.set(id, (tries.get(id) ?? 0) + 1)
          if (!database.up) return Effect.die(lost)
          recorded.push(id)
          return Effect.void
        })
    }))
  const keep = (id: string, untilInMillis?: number, record?: Effect.Effect<void>) =>
    runtime.runPromise(
      Effect.flatMap(outcome(id, untilInMillis, record), (kept) =>
        SubmissionBacklog.use((backlog) => backlog.keep(kept))
      )
    )
  const size = () => runtime.runPromise(SubmissionBacklog.use((backlog) => backlog.size))
  const settled = async (withinMs = 2_000) => {
    const deadline = Date.now() + withinMs
    while ((await size()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    return size()
  }
  return { runtime, database, recorded, tries, lines, results, gauge, keep, size, settled }
}

let beds: Array<ReturnType<typeof makeBed>> = []
const bedOf = (policy?: BacklogPolicy) => {
  const bed = makeBed(policy)
  beds.push(bed)
  return bed
}
afterEach(async () => {
  await Promise.all(beds.map((bed) => bed.runtime.dispose()))
  beds = []
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const messages = (lines: ReadonlyArray<Line>) => lines.map((line) => line.message)

describe("outcomes kept while the database is away", () => {
  it("are recorded when it answers, oldest first; the outage is said once, however many rounds it takes", async () => {
    const bed = bedOf()
    expect(await bed.keep("gen_a")).toBe(true)
    expect(await bed.keep("gen_b")).toBe(true)
    expect(bed.gauge.kept).toBe(2)
    await sleep(200)
    // Several rounds met the lost database; none of them said anything.
    expect(bed.tries.get("gen_a")).toBeGreaterThan(2)
    expect(bed.recorded).toEqual([])
    expect(messages(bed.lines)).toEqual([
      "submissions: the database is out of reach; keeping what it did not record, to record when it answers"
    ])
    expect(bed.lines[0]).toMatchObject({ level: "Warn", annotations: { task_id: "gen_a" } })
    bed.database.up = true
    expect(await bed.settled()).toBe(0)
    expect(bed.recorded).toEqual(["gen_a", "gen_b"])
    expect(messages(bed.lines).slice(1)).toEqual(["submissions: every kept outcome is settled"])
    expect(bed.lines[1]?.annotations).toEqual({ recorded: 2, past_deadline: 0, turned_away: 0, failed: 0 })
    expect(bed.results).toEqual(["kept", "kept", "recorded", "recorded"])
    expect(bed.gauge.kept).toBe(0)
  })

  it("a later outage is said again: once per outage, not once per process", async () => {
    const bed = bedOf()
    bed.database.up = true
    await bed.keep("gen_a")
    expect(await bed.settled()).toBe(0)
    bed.database.up = false
    await bed.keep("gen_b")
    bed.database.up = true
    expect(await bed.settled()).toBe(0)
    expect(messages(bed.lines).filter((m) => m.includes("out of reach"))).toHaveLength(2)
    expect(bed.recorded).toEqual(["gen_a", "gen_b"])
  })
})

describe("the bound", () => {
  it("past the cap an outcome is turned away, said once, and never recorded: its callback or deadline settles it", async () => {
    const bed = bedOf()
    const answers = [await bed.keep("gen_a"), await bed.keep("gen_b"), await bed.keep("gen_c"), await bed.keep("gen_d")]
    expect(answers).toEqual([true, true, false, false])
    expect(messages(bed.lines)).toEqual([
      "submissions: the database is out of reach; keeping what it did not record, to record when it answers",
      "submissions: 2 outcomes kept, the most this process holds; the rest are left to their callbacks and deadlines"
    ])
    expect(bed.lines[1]).toMatchObject({ level: "Warn", annotations: { task_id: "gen_c" } })
    bed.database.up = true
    expect(await bed.settled()).toBe(0)
    await sleep(50)
    expect(bed.recorded).toEqual(["gen_a", "gen_b"])
    expect(bed.tries.has("gen_c") || bed.tries.has("gen_d")).toBe(false)
    expect(bed.lines.at(-1)?.annotations).toEqual({ recorded: 2, past_deadline: 0, turned_away: 2, failed: 0 })
    expect(bed.results.filter((r) => r === "turned_away")).toHaveLength(2)
  })

  it("an outcome still kept at its deadline is let go unrecorded: the deadline sweep has settled the work", async () => {
    const bed = bedOf()
    await bed.keep("gen_late", 50)
    await bed.keep("gen_soon")
    await sleep(150)
    bed.database.up = true
    expect(await bed.settled()).toBe(0)
    expect(bed.recorded).toEqual(["gen_soon"])
    expect(bed.lines.at(-1)?.annotations).toEqual({ recorded: 1, past_deadline: 1, turned_away: 0, failed: 0 })
    expect(bed.results).toContain("past_deadline")
  })

  it("a record that fails for another reason is logged as a fault and not tried again", async () => {
    const bed = bedOf()
    let tries = 0
    await bed.keep(
      "gen_bug",
      60_000,
      Effect.suspend(() => {
        tries++
        return bed.database.up ? Effect.die(new Error("a bug, not an outage")) : Effect.die(lost)
      })
    )
    await sleep(60)
    const whileAway = tries
    bed.database.up = true
    expect(await bed.settled()).toBe(0)
    await sleep(60)
    expect(tries).toBe(whileAway + 1)
    expect(bed.lines.map((l) => `${l.level} ${l.message}`)).toContain(
      "Error submissions: recording a kept outcome failed"
    )
    expect(bed.lines.at(-1)?.annotations).toEqual({ recorded: 0, past_deadline: 0, turned_away: 0, failed: 1 })
  })
})

describe("a stopping process", () => {
  it("gives what it keeps one last round: recorded if the database answers", async () => {
    const bed = makeBed({ ...quickPolicy, retryMillis: 60_000, maxRetryMillis: 60_000 })
    await bed.keep("gen_a")
    bed.database.up = true
    await bed.runtime.dispose()
    expect(bed.recorded).toEqual(["gen_a"])
    expect(messages(bed.lines)).not.toContain(
      "submissions: stopping with outcomes unrecorded; their callbacks and deadlines settle them"
    )
  })

  it("says what it leaves to the callbacks and deadlines when it does not", async () => {
    const bed = makeBed()
    await bed.keep("gen_a")
    await bed.runtime.dispose()
    expect(bed.recorded).toEqual([])
    expect(bed.lines.at(-1)).toMatchObject({
      message: "submissions: stopping with outcomes unrecorded; their callbacks and deadlines settle them",
      annotations: { unrecorded: 1 }
    })
  })
})
