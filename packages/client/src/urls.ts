/** Where the API is, from a base URL that names the site root or the API root. */

/** Where `lyre` and the embedded default listen unless told otherwise. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080"

/**
 * The API root (`.../api`) of a base URL that names either the site root or the API root:
 * `https://lyre.example` and `https://lyre.example/api` both give `https://lyre.example/api`.
 */
export const apiRootOf = (baseUrl: string): string => {
  const url = new URL(baseUrl)
  const path = url.pathname.replace(/\/+$/, "")
  url.pathname = path.endsWith("/api") ? path : `${path}/api`
  url.search = ""
  url.hash = ""
  return url.toString().replace(/\/+$/, "")
}

/** The site root (where `/trpc`, `/mcp` and `/files` live) of the same kind of base URL. */
export const siteRootOf = (baseUrl: string): string => apiRootOf(baseUrl).replace(/\/api$/, "")
