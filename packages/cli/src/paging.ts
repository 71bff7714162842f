/** The `--limit` and `--starting-after` flags of every list command, as the client's ListOptions. */
import type { ListOptions } from "@lyre/client"
import type { Command } from "commander"
import { CliError } from "./errors.ts"

export const pageOf = (flags: {
  readonly limit?: string | undefined
  readonly startingAfter?: string | undefined
}): ListOptions => {
  const limit = flags.limit === undefined ? undefined : Number(flags.limit)
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100)) {
    throw new CliError("limit: must be an integer from 1 to 100", { param: "limit", code: "invalid_parameter" })
  }
  return {
    ...(limit === undefined ? {} : { limit }),
    ...(flags.startingAfter === undefined ? {} : { startingAfter: flags.startingAfter })
  }
}

/** Adds the two flags `pageOf` reads to a list command. */
export const withPaging = (command: Command): Command =>
  command
    .option("--limit <n>", "1 to 100 (default 20)")
    .option("--starting-after <id>", "the last id of the previous page")
