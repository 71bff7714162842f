/**
 * The path and query of a request's target, as `new URL(target, base)` reads them. A target the
 * URL parser refuses (`/\@`, which it reads as an address with no host) is routed as sent, to a
 * 404: its throw had escaped the request handler and ended the process (decision 0098).
 */
import type { RequestQuery } from "@lyre/rest"

export interface RequestTarget extends RequestQuery {
  readonly pathname: string
}

const base = "http://localhost"

export const requestTarget = (target: string | undefined): RequestTarget => {
  const raw = target ?? "/"
  const question = raw.indexOf("?")
  return (
    URL.parse(raw, base) ?? {
      pathname: question === -1 ? raw : raw.slice(0, question),
      search: "",
      searchParams: new URLSearchParams()
    }
  )
}
