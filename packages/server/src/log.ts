/** JSON-lines logging at the operator's LOG_LEVEL; every request line carries its request id. */
const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const
export type LogLevel = keyof typeof levels

export interface Logger {
  readonly enabled: (level: LogLevel) => boolean
  readonly log: (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void
}

export const makeLogger = (minimum: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Logger => {
  const enabled = (level: LogLevel) => levels[level] >= levels[minimum]
  return {
    enabled,
    log: (level, msg, fields) => {
      if (enabled(level)) write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`)
    }
  }
}
