/** The `--limit` and `--starting-after` flags of every list command, as the client's ListOptions. */
import type { ListOptions } from "@lyre/client"
import { CliError } from "./errors.ts"

export const pageOf = (flags: { readonly limit?: string | undefined; readonly startingAfter?: string | undefined }): ListOptions => {
  const limit = flags.limit === undefined ? undefined : Number(flags.limit)
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100)) {
    throw new CliError("limit: must be an integer from 1 to 100", { param: "limit", code: "invalid_parameter" })
  }
  return {
    ...(limit === undefined ? {} : { limit }),
    ...(flags.startingAfter === undefined ? {} : { startingAfter: flags.startingAfter })
  }
}
