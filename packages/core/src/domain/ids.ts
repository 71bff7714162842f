/**
 * Identifiers are a type prefix and 24 random base62 characters: URL-safe, unguessable, and
 * recognisable at a glance. An id of the wrong shape is simply not found.
 */
import { randomFillSync } from "node:crypto"
import { Context, Effect, Layer } from "effect"

export const idPrefixes = {
  account: "acct",
  apiKey: "key",
  task: "gen",
  track: "trk",
  export: "exp",
  upload: "upl",
  event: "evt",
  webhookEndpoint: "whe",
  ledgerEntry: "led",
  delivery: "dlv",
  request: "req",
  session: "ses",
  grant: "grt",
  persona: "per",
  lyrics: "lyt"
} as const
export type IdKind = keyof typeof idPrefixes

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** Random bytes drawn from one pooled buffer: a system call per 4 KiB instead of per id. */
const pool = Buffer.alloc(4096)
let poolOffset = pool.length
const randomByte = (): number => {
  if (poolOffset === pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  return pool[poolOffset++] ?? 0
}

const alphabetCodes = Buffer.from(alphabet, "latin1")
/** Where an id's characters are gathered: one string is cut from it, not one appended per character. */
const scratch = Buffer.alloc(64)

/**
 * Uniform base62 by rejection sampling (bytes >= 248 would bias the first 8 symbols). The
 * string comes out flat: 24 appends made a chain of 25 pieces, which every header write and
 * hash lookup of a request id first had to copy into one.
 */
export const randomBase62 = (length: number): string => {
  const chars = length <= scratch.length ? scratch : Buffer.alloc(length)
  let filled = 0
  while (filled < length) {
    const byte = randomByte()
    if (byte < 248) chars[filled++] = alphabetCodes[byte % 62] ?? 0
  }
  return chars.toString("latin1", 0, length)
}

const shapes = new Map<string, RegExp>(
  Object.values(idPrefixes).map((prefix) => [prefix, new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`)])
)

export const hasIdShape = (kind: IdKind, value: string): boolean => shapes.get(idPrefixes[kind])?.test(value) ?? false

/**
 * An export's id by its prefix alone: how the agent surfaces tell an export they were handed
 * back (`exp_...`) from a generation task, each read by its own procedure, which judges the rest.
 */
export const isExportId = (value: string): boolean => value.startsWith(`${idPrefixes.export}_`)

/** An upload's id (`upl_...`) by its prefix alone, as isExportId: the agents follow uploads as tasks too. */
export const isUploadId = (value: string): boolean => value.startsWith(`${idPrefixes.upload}_`)

/** A lyrics task's id (`lyt_...`) by its prefix alone, as isExportId: the agents follow lyrics tasks too. */
export const isLyricsId = (value: string): boolean => value.startsWith(`${idPrefixes.lyrics}_`)

export class Ids extends Context.Service<
  Ids,
  {
    readonly make: (kind: IdKind) => Effect.Effect<string>
  }
>()("lyre/core/domain/Ids") {
  static readonly layer = Layer.succeed(Ids)(
    Ids.of({ make: (kind) => Effect.sync(() => `${idPrefixes[kind]}_${randomBase62(24)}`) })
  )
}
