/** Failures of the CLI itself, and the exit codes every command shares. */

export const exitCodes = { ok: 0, error: 1, taskFailed: 2 } as const

/** A mistake the user can fix (a missing key, a bad flag, an unreadable file): exit 1 with the message. */
export class CliError extends Error {
  override readonly name = "CliError"
  readonly param: string | undefined
  readonly code: string | undefined

  constructor(
    message: string,
    options: { readonly param?: string | undefined; readonly code?: string | undefined } = {}
  ) {
    super(message)
    this.param = options.param
    this.code = options.code
  }
}

/** The task ended `failed`: exit 2. */
export class TaskFailed extends Error {
  override readonly name = "TaskFailed"
}
