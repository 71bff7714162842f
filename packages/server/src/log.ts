/** JSON-lines logging at the operator's LOG_LEVEL; every request line carries its request id. */
import { Logger as EffectLogger, Predicate } from "effect"

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const
export type LogLevel = keyof typeof levels

export interface Logger {
  readonly enabled: (level: LogLevel) => boolean
  readonly log: (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void
}

export const makeLogger = (
  minimum: LogLevel,
  write: (line: string) => void = (line) => process.stdout.write(line)
): Logger => {
  const enabled = (level: LogLevel) => levels[level] >= levels[minimum]
  return {
    enabled,
    log: (level, msg, fields) => {
      if (enabled(level))
        write(`${JSON.stringify({ time: new Date(Date.now()).toISOString(), level, msg, ...fields })}\n`)
    }
  }
}

const levelOfEffect = (label: string): LogLevel =>
  label === "FATAL" || label === "ERROR" ? "error" : label === "WARN" ? "warn" : label === "INFO" ? "info" : "debug"

/**
 * Effect's own log lines (the worker's start, outages, leases not handed back) written by
 * `logger`, so they have the server's shape: `time`, `level`, `msg`, then the annotations, a
 * failure as `cause`. Effect's `consoleJson` wrote another (`message`, `level: "INFO"`,
 * `timestamp`, `annotations`, `spans`, `fiberId`), and a log pipeline had to read both. Of a
 * message's parts the strings make `msg`; an object's fields join the line's; anything else is
 * kept under `details`.
 */
export const effectLinesOf = (logger: Logger): EffectLogger.Logger<unknown, void> =>
  EffectLogger.map(EffectLogger.formatStructured, (entry) => {
    const parts: ReadonlyArray<unknown> = Array.isArray(entry.message) ? entry.message : [entry.message]
    const words: Array<string> = []
    const fields: Record<string, unknown> = {}
    const details: Array<unknown> = []
    for (const part of parts) {
      if (typeof part === "string") words.push(part)
      else if (Predicate.isObject(part)) Object.assign(fields, part)
      else details.push(part)
    }
    logger.log(levelOfEffect(entry.level), words.join(" "), {
      ...fields,
      ...entry.annotations,
      ...(details.length === 0 ? {} : { details }),
      ...(entry.cause === undefined ? {} : { cause: entry.cause })
    })
  })
