/** Discovery documents served under the site root. */
import { scopeNames } from "@lyre/core"

/** RFC 9728 protected-resource metadata for the REST API. */
export const protectedResourceMetadata = (publicUrl: string) => ({
  resource: `${publicUrl}/api`,
  authorization_servers: [publicUrl],
  scopes_supported: [...scopeNames],
  bearer_methods_supported: ["header"],
  resource_name: "Lyre music generation API",
  resource_documentation: `${publicUrl}/api/docs`
})
