import { describe, expect, it } from "vitest"
import { requestTarget } from "../../src/http/requestTarget.ts"

const viaUrl = (target: string) => {
  // What the URL parser refuses is routed as sent (to a 404).
  if (!URL.canParse(target, "http://localhost")) return { pathname: target.split("?")[0], search: "", query: [] }
  const url = new URL(target, "http://localhost")
  return { pathname: url.pathname, search: url.search, query: [...url.searchParams] }
}
const viaTarget = (target: string) => {
  const parsed = requestTarget(target)
  return { pathname: parsed.pathname, search: parsed.search, query: [...parsed.searchParams] }
}

describe("a request's target", () => {
  const targets = [
    "/",
    "/api/v1/me",
    "/api/v1/music/generations/gen_abc?x=1&y=two+words&z=%20",
    "/trpc/me?batch=1&input=%7B%7D",
    "/api/v1/../admin/v1/accounts",
    "/api/./v1/me",
    "/api/v1/me/..",
    "/api/%2e%2e/admin",
    "/a\\b",
    "//evil.example/x",
    "/files/a%2Fb?expires=1&signature=abc",
    "/x?q=a#frag",
    "/x#frag?y",
    "/caf\u00e9",
    "/x?\u00e9=\u00fc",
    "/x?a=1&a=2&=&b",
    "/api/v1/music/generations?limit=10&starting_after=gen_1",
    "/x?",
    "/x??a=b",
    "/signin?return_to=/dashboard/a?b=c",
    "/x;y=1/z",
    "/x?a=%zz",
    '/x?a="q"&b=<t>',
    "/x y",
    "/x\ty",
    "/.well-known/oauth-protected-resource/api",
    "/\\@",
    "/\\@x?y=1"
  ]
  it.each(targets)("%s reads as new URL reads it", (target) => {
    expect(viaTarget(target)).toEqual(viaUrl(target))
  })
})
