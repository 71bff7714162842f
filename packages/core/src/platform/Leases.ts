/**
 * The leases this process holds: tasks, exports, uploads being listened to, lyrics and webhook deliveries. Each queue notes a lease
 * as its claim returns and forgets it once the row is handed back or settled, so a stopping
 * process knows at every moment what it still holds: it hands that back before its pool
 * closes, within the drain's bound, and names in one log line whatever it could not.
 *
 * The book is made by the entry point (it outlives the runtime, so the exit code and the drain's
 * hard limit can read it) and given to the runtime as this service.
 */
import { Clock, Context, Effect, Layer } from "effect"

export type LeaseKind = "task" | "export" | "upload" | "lyrics" | "delivery"

/** The kinds as the drain's log line names them. */
const plural = {
  task: "tasks",
  export: "exports",
  upload: "uploads",
  lyrics: "lyrics tasks",
  delivery: "deliveries"
} as const satisfies Record<LeaseKind, string>

export interface LeaseBook {
  readonly hold: (kind: LeaseKind, ids: ReadonlyArray<string>) => void
  readonly free: (kind: LeaseKind, ids: ReadonlyArray<string>) => void
  /** The ids of `kind` held now. */
  readonly held: (kind: LeaseKind) => ReadonlyArray<string>
  /** Every lease held now, by kind in the log line's words; null when none. */
  readonly unreturned: () => Readonly<Record<string, ReadonlyArray<string>>> | null
  /** From now on hand-backs end at `millis` (epoch): the drain has begun. The first call counts. */
  readonly drainBy: (millis: number) => void
  /** When the hand-backs must end, or null while the process is not draining. */
  readonly deadline: () => number | null
  /** Notes that the drain's line was written, so the hard limit does not write a second one. */
  readonly markReported: () => boolean
}

export const makeLeaseBook = (): LeaseBook => {
  const books: Record<LeaseKind, Set<string>> = {
    task: new Set(),
    export: new Set(),
    upload: new Set(),
    lyrics: new Set(),
    delivery: new Set()
  }
  let deadline: number | null = null
  let reported = false
  return {
    hold: (kind, ids) => {
      for (const id of ids) books[kind].add(id)
    },
    free: (kind, ids) => {
      for (const id of ids) books[kind].delete(id)
    },
    held: (kind) => [...books[kind]],
    unreturned: () => {
      const named: Record<string, ReadonlyArray<string>> = {}
      for (const kind of ["task", "export", "upload", "lyrics", "delivery"] as const) {
        if (books[kind].size > 0) named[plural[kind]] = [...books[kind]]
      }
      return Object.keys(named).length === 0 ? null : named
    },
    drainBy: (millis) => {
      deadline ??= millis
    },
    deadline: () => deadline,
    markReported: () => {
      const first = !reported
      reported = true
      return first
    }
  }
}

/** The line a drain writes when it could not hand every lease back. */
export const unreturnedMessage = "drain: leases not handed back; they come back when their leases expire"

export class Leases extends Context.Service<Leases, LeaseBook>()("lyre/core/services/Leases") {
  static readonly layer = (book: LeaseBook) => Layer.succeed(Leases)(book)
}

/**
 * Runs a hand-back within what is left of the drain: true when it completed, false when it
 * failed or the drain's time ran out (the statement may still land; the lease is then named
 * as not handed back, the safe side). Outside a drain it is given as long as it takes.
 */
export const handBackWithin = <A, E, R>(
  book: LeaseBook,
  handBack: Effect.Effect<A, E, R>
): Effect.Effect<boolean, never, R> =>
  Effect.gen(function* () {
    const deadline = book.deadline()
    const attempt = handBack.pipe(
      Effect.as(true),
      Effect.catchCause(() => Effect.succeed(false))
    )
    if (deadline === null) return yield* attempt
    const left = deadline - (yield* Clock.currentTimeMillis)
    if (left <= 0) return false
    return yield* attempt.pipe(Effect.timeoutOrElse({ duration: left, orElse: () => Effect.succeed(false) }))
  })

/**
 * After every queue's hand-back, before the pool closes: one error line naming what this process
 * still holds, if anything. Answers whether everything was handed back.
 */
export const reportUnreturned = (book: LeaseBook): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const unreturned = book.unreturned()
    if (unreturned === null) return Effect.succeed(true)
    if (!book.markReported()) return Effect.succeed(false)
    return Effect.logError(unreturnedMessage).pipe(Effect.annotateLogs(unreturned), Effect.as(false))
  })
