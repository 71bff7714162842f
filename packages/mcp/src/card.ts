/**
 * The MCP server card at `/.well-known/mcp/server-card.json`: who the server is, where to
 * connect and with which protocol revisions, what authorization it asks for, its capabilities as
 * `initialize` declares them (tasks included) and its tools as `tools/list` gives them (the same
 * definitions, not a copy).
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js"
import { mcpResourceMetadataUrl, requiredScope } from "./http.ts"
import { serverCapabilities, serverIdentity, serviceVersion } from "./server.ts"
import { toolDefinitions } from "./tools.ts"

export const serverCardPath = "/.well-known/mcp/server-card.json"

/** Reverse-DNS of the site's host (`lyre.example.com` -> `com.example.lyre`); an address stays as it is. */
const reverseDns = (hostname: string): string =>
  /^[\d.]+$/.test(hostname) || hostname.startsWith("[")
    ? hostname.replace(/[[\]:]/g, "-")
    : hostname.split(".").reverse().join(".")

export const serverCard = (publicUrl: string) => ({
  name: `${reverseDns(new URL(publicUrl).hostname)}/${serverIdentity.name}`,
  title: serverIdentity.title,
  version: serviceVersion,
  description: serverIdentity.description,
  websiteUrl: publicUrl,
  remotes: [
    {
      type: "streamable-http",
      url: `${publicUrl}/mcp`,
      supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      headers: [
        {
          name: "Authorization",
          description:
            "`Bearer <API key or OAuth access token>`; tools/call needs it, initialize and tools/list do not.",
          isRequired: false,
          isSecret: true
        }
      ]
    }
  ],
  authorization: {
    required: true,
    methods_without_credential: ["initialize", "ping", "tools/list"],
    protected_resource_metadata: mcpResourceMetadataUrl(publicUrl),
    scopes_required: [requiredScope],
    bearer_methods_supported: ["header"]
  },
  capabilities: serverCapabilities,
  tools: toolDefinitions
})

/** The card's own media type when the client asks for it (the draft's negotiation), JSON otherwise. */
export const serverCardMediaType = (accept: string | undefined): string =>
  (accept ?? "").includes("application/mcp-server-card+json")
    ? "application/mcp-server-card+json"
    : "application/json; charset=utf-8"
