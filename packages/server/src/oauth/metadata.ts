/**
 * RFC 8414 authorization server metadata and the RFC 7517 key set. Every supported value is
 * listed explicitly; there is no registration endpoint (clients are registered by an operator).
 */
import { scopeNames } from "@lyre/core"

export const authorizationServerMetadata = (publicUrl: string) => ({
  issuer: publicUrl,
  authorization_endpoint: `${publicUrl}/oauth/authorize`,
  token_endpoint: `${publicUrl}/oauth/token`,
  revocation_endpoint: `${publicUrl}/oauth/revoke`,
  jwks_uri: `${publicUrl}/.well-known/jwks.json`,
  scopes_supported: [...scopeNames],
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  code_challenge_methods_supported: ["S256"],
  token_endpoint_auth_methods_supported: ["none"],
  revocation_endpoint_auth_methods_supported: ["none"],
  authorization_response_iss_parameter_supported: true,
  service_documentation: `${publicUrl}/api/docs`
})
