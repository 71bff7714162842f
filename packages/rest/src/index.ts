export { makeRestHandler } from "./handler.ts"
export type { RequestQuery, RestOptions } from "./handler.ts"
export { openApiDocument } from "./openapi.ts"
