export { maxBodyBytes, readJsonBody } from "./body.ts"
export type { BodyResult } from "./body.ts"
export { sendApiError, sendJson } from "./send.ts"
export { lyreJsonRpcCodes } from "./jsonrpc.ts"
