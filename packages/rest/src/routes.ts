/**
 * The REST route table, read from the router's own `openapi` metadata: the same source
 * trpc-to-openapi generates the document from, so a route cannot be served and undocumented.
 */
import type { AnyTRPCRouter } from "@trpc/server"
import { flatProcedures } from "@lyre/core"
import type { LyreMeta } from "@lyre/core"
import { decodePathSegment } from "@lyre/http"

export interface Route {
  readonly method: string
  readonly path: string
  readonly procedurePath: string
  readonly type: "query" | "mutation"
  readonly meta: LyreMeta
  readonly pattern: RegExp
  readonly paramNames: ReadonlyArray<string>
}

export interface RouteMatch {
  readonly route: Route
  readonly params: Record<string, string>
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

export const routesOf = (router: AnyTRPCRouter): ReadonlyArray<Route> =>
  Object.entries(flatProcedures(router)).flatMap(([procedurePath, procedure]) => {
    const meta = procedure._def.meta as LyreMeta | undefined
    const openapi = meta?.openapi
    const type = procedure._def.type
    if (meta === undefined || openapi === undefined || type === "subscription") return []
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
        type,
        meta,
        pattern: new RegExp(`^${source}/?$`),
        paramNames
      }
    ]
  })

/** The route for a method and path; `allowed` lists the methods the path has when none matches. */
export const matchRoute = (
  routes: ReadonlyArray<Route>,
  method: string,
  path: string
): { readonly match: RouteMatch | null; readonly allowed: ReadonlyArray<string> } => {
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
