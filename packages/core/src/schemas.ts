/**
 * The pure part of core, for clients and browsers: the interface's schemas, pricing, request
 * validation, the error table, and the router's types. Importing it starts nothing and loads
 * neither Node built-ins nor tRPC's server, nor any database or Redis driver; the services and
 * layers stay behind the main entry.
 */
export * from "./domain/errors.ts"
export * from "./domain/models.ts"
export * from "./domain/pricing.ts"
export * from "./domain/validation.ts"
export * from "./lyrics/model.ts"
export type { AppRouter, RouterInputs, RouterOutputs } from "./trpc/router.ts"
