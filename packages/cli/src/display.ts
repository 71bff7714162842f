/**
 * Progress on standard error, so standard output carries only the result: a live spinner on a
 * terminal, plain lines otherwise (a pipe, a CI log, or `--output json`).
 */
import { createSpinner } from "nanospinner"

export interface Display {
  /**
   * Replaces the live status. Plain output prints it only when `key` (default: the text)
   * differs from the last one, so a counter that moves every second does not flood a log.
   */
  progress(text: string, key?: string): void
  succeed(text: string): void
  fail(text: string): void
  /** A message that stays (a retry notice, a saved file). */
  note(text: string): void
}

export const liveDisplay = (stream: NodeJS.WriteStream): Display => {
  const spinner = createSpinner("", { stream })
  let spinning = false
  const show = (text: string) => {
    if (spinning) spinner.update({ text })
    else {
      spinner.start({ text })
      spinning = true
    }
  }
  return {
    progress: (text) => show(text),
    succeed: (text) => {
      if (!spinning) spinner.start({ text })
      spinner.success({ text })
      spinning = false
    },
    fail: (text) => {
      if (!spinning) spinner.start({ text })
      spinner.error({ text })
      spinning = false
    },
    note: (text) => {
      if (spinning) spinner.clear()
      stream.write(`${text}\n`)
      if (spinning) spinner.render()
    }
  }
}

export const plainDisplay = (stream: NodeJS.WritableStream): Display => {
  let last = ""
  return {
    progress: (text, key = text) => {
      if (key === last) return
      last = key
      stream.write(`${text}\n`)
    },
    succeed: (text) => void stream.write(`${text}\n`),
    fail: (text) => void stream.write(`${text}\n`),
    note: (text) => void stream.write(`${text}\n`)
  }
}

/**
 * Live only on a terminal of known width (the spinner counts the lines it redraws by it) and
 * when standard output is one too: nanospinner animates only then.
 */
export const displayFor = (stream: NodeJS.WriteStream, stdout: NodeJS.WriteStream, plain: boolean): Display =>
  !plain && stream.isTTY === true && stdout.isTTY === true && (stream.columns ?? 0) > 0
    ? liveDisplay(stream)
    : plainDisplay(stream)
