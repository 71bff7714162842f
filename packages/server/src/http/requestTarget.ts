/**
 * The path and query of a request's target, as `new URL(target, base)` reads them, without
 * building a URL for the common case: that parse cost about 7 µs of a request's 300 (the
 * largest single item of Node's own work in a profile of GET /v1/me). A target the URL parser
 * would change (dot segments, percent escapes, backslashes, a fragment, anything outside
 * printable ASCII, a leading `//`) still goes through it, so routing sees exactly what it did;
 * one it refuses (`/\\@`, which it reads as an address with no host) is routed as sent, to a 404,
 * where the throw had escaped the request handler.
 */
import type { RequestQuery } from "@lyre/rest"

export interface RequestTarget extends RequestQuery {
  readonly pathname: string
}

/** Characters the URL parser leaves as they are in a path and a query (no `.`, `%`, `\`, `#`). */
const plain = /^\/(?!\/)[A-Za-z0-9\-_~/:@!$&'()*+,;=?]*$/

class PlainTarget implements RequestTarget {
  readonly pathname: string
  readonly #query: string
  #params: URLSearchParams | undefined
  constructor(pathname: string, query: string) {
    this.pathname = pathname
    this.#query = query
  }
  get search(): string {
    return this.#query === "" ? "" : `?${this.#query}`
  }
  /** Made when read: most answers never look at the query. */
  get searchParams(): URLSearchParams {
    this.#params ??= new URLSearchParams(this.#query)
    return this.#params
  }
}

export const requestTarget = (target: string | undefined): RequestTarget => {
  const raw = target ?? "/"
  const question = raw.indexOf("?")
  const pathname = question === -1 ? raw : raw.slice(0, question)
  const search = question === -1 ? "" : raw.slice(question + 1)
  // URLSearchParams drops a leading `?` of what it is given, which the URL parser keeps as a name.
  if (plain.test(raw) && !search.startsWith("?")) return new PlainTarget(pathname, search)
  return URL.parse(raw, "http://localhost") ?? new PlainTarget(pathname, "")
}
