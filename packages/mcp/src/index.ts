export { serverCard, serverCardMediaType, serverCardPath } from "./card.ts"
export { makeMcpHandler, mcpResourceMetadataUrl } from "./http.ts"
export type { McpHttpOptions } from "./http.ts"
export { toolDefinitions } from "./tools.ts"
