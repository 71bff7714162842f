/**
 * Lyre's JSON-RPC codes for domain failures that neither JSON-RPC nor the agent protocols name,
 * in the implementation-defined server-error range: MCP and A2A answer a 402 or a 429 with the
 * same number, and `data` carries the REST envelope that says exactly which failure it is.
 */
export const lyreJsonRpcCodes = {
  unauthenticated: -32010,
  forbidden: -32011,
  paymentRequired: -32012,
  rateLimited: -32013,
  unavailable: -32014
} as const
