/**
 * The REST route table, read from core's procedure table: each procedure's `openapi` metadata, the
 * same source trpc-to-openapi generates the document from (through the router built of that
 * table), so a route cannot be served and undocumented.
 */
import type { LyreMeta, ProcedureParts, ProcedureTree } from "@lyre/core"
import { partsByPath } from "@lyre/core"
import { decodePathSegment } from "@lyre/http"

export interface Route {
  readonly method: string
  readonly path: string
  readonly procedurePath: string
  readonly type: "query" | "mutation"
  readonly meta: LyreMeta
  readonly parts: ProcedureParts
  readonly pattern: RegExp
  readonly paramNames: ReadonlyArray<string>
}

export interface RouteMatch<R extends Route = Route> {
  readonly route: R
  readonly params: Record<string, string>
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

export const routesOf = (table: ProcedureTree): ReadonlyArray<Route> =>
  partsByPath(table).flatMap(([procedurePath, parts]) => {
    const openapi = parts.meta.openapi
    if (openapi === undefined) return []
    const paramNames: Array<string> = []
    const source = openapi.path
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const name = /^\{([^}]+)\}$/.exec(part)?.[1]
        if (name === undefined) return escapeRegExp(part)
        paramNames.push(name)
        return "([^/]+)"
      })
      .join("")
    return [
      {
        method: openapi.method,
        path: openapi.path,
        procedurePath,
        type: parts.type,
        meta: parts.meta,
        parts,
        pattern: new RegExp(`^${source}/?$`),
        paramNames
      }
    ]
  })

/** The route for a method and path; `allowed` lists the methods the path has when none matches. */
export const matchRoute = <R extends Route>(
  routes: ReadonlyArray<R>,
  method: string,
  path: string
): { readonly match: RouteMatch<R> | null; readonly allowed: ReadonlyArray<string> } => {
  const allowed: Array<string> = []
  for (const route of routes) {
    const found = route.pattern.exec(path)
    if (found === null) continue
    // Decoded before the method is looked at: a parameter that does not decode is no route's,
    // whatever the method, and is answered 404 as an unknown path is.
    const params = paramsOf(route, found)
    if (params === undefined) continue
    if (route.method !== method) {
      allowed.push(route.method)
      continue
    }
    return { match: { route, params }, allowed }
  }
  return { match: null, allowed }
}

const paramsOf = (route: Route, found: RegExpExecArray): Record<string, string> | undefined => {
  const params: Record<string, string> = {}
  let group = 1
  for (const name of route.paramNames) {
    const value = decodePathSegment(found[group++] ?? "")
    if (value === undefined) return undefined
    params[name] = value
  }
  return params
}
