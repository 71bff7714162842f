export { makeRestHandler } from "./handler.ts"
export type { RestOptions } from "./handler.ts"
export { openApiDocument } from "./openapi.ts"
