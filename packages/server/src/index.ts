export { createLyre } from "./lyre.ts"
export type { Lyre, LyreOptions, RequestHandler } from "./lyre.ts"
export { ConfigurationError } from "./config.ts"
export type { ServerConfig } from "./config.ts"
