/**
 * The discovery documents of the resource side: RFC 9728 protected-resource metadata for each
 * protected surface, and the RFC 9727 API catalog. All are pure functions of the site root.
 */
import { scopeNames } from "@lyre/core"
import type { Scope } from "@lyre/core"

/** The protected surfaces, by the path their resource identifier has below the site root. */
export const protectedResources = {
  api: { name: "Lyre music generation API (REST and tRPC)", scopes: scopeNames },
  mcp: { name: "Lyre MCP server", scopes: ["profile", "music:generate"] },
  a2a: { name: "Lyre A2A agent", scopes: ["profile", "music:generate"] }
} as const satisfies Record<string, { readonly name: string; readonly scopes: ReadonlyArray<Scope> }>

export type ProtectedSurface = keyof typeof protectedResources

export const protectedResourceMetadataPath = "/.well-known/oauth-protected-resource"

/**
 * RFC 9728 metadata for one surface. Its `resource` is the audience an access token must carry
 * to be accepted there (RFC 8707), so a token minted for `/mcp` is no key to `/api`.
 */
export const protectedResourceMetadata = (publicUrl: string, surface: ProtectedSurface = "api") => ({
  resource: `${publicUrl}/${surface}`,
  authorization_servers: [publicUrl],
  scopes_supported: [...protectedResources[surface].scopes],
  bearer_methods_supported: ["header"],
  resource_name: protectedResources[surface].name,
  resource_documentation: `${publicUrl}/api/docs`,
  tls_client_certificate_bound_access_tokens: false,
  dpop_bound_access_tokens_required: false
})

/**
 * Where each metadata document is served: the root address the interface names (for the REST
 * API, which the 401 challenges point to), and RFC 9728's path-suffixed form for every surface,
 * which is where a client that starts from a resource identifier looks.
 */
export const protectedResourceMetadataDocuments = (publicUrl: string): ReadonlyMap<string, string> => {
  const documents = new Map<string, string>([
    [protectedResourceMetadataPath, JSON.stringify(protectedResourceMetadata(publicUrl, "api"))]
  ])
  for (const surface of Object.keys(protectedResources) as Array<ProtectedSurface>) {
    documents.set(
      `${protectedResourceMetadataPath}/${surface}`,
      JSON.stringify(protectedResourceMetadata(publicUrl, surface))
    )
  }
  return documents
}

export const apiCatalogPath = "/.well-known/api-catalog"

/** RFC 9727 section 4.2: the linkset media type with the catalog's profile. */
export const apiCatalogMediaType = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"'

/** The `Link` header that names the catalog (RFC 9727 section 2, answered to HEAD and GET). */
export const apiCatalogLink = (publicUrl: string): string => `<${publicUrl}${apiCatalogPath}>; rel="api-catalog"`

/** RFC 9727 API catalog: one API, its machine description, its human documentation, its status. */
export const apiCatalog = (publicUrl: string) => ({
  linkset: [
    {
      anchor: `${publicUrl}/api`,
      "service-desc": [{ href: `${publicUrl}/api/openapi.json`, type: "application/vnd.oai.openapi+json;version=3.1" }],
      "service-doc": [{ href: `${publicUrl}/api/docs`, type: "text/html" }],
      status: [{ href: `${publicUrl}/readyz`, type: "application/json" }]
    }
  ]
})
