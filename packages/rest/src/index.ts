export { makeRestHandler, sendApiError, sendJson } from "./handler.ts"
export { readJsonBody } from "./body.ts"
export type { RestOptions } from "./handler.ts"
export { openApiDocument } from "./openapi.ts"
