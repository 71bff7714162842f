import { Context, Layer } from "effect"

/** The operator's settings the domain needs, read once at start by the composition root. */
export interface SettingsShape {
  /** The site root, e.g. `http://127.0.0.1:8080`; `base_url` is this plus `/api`. */
  readonly publicUrl: string
  /** Keys the API-key hashes; never leaves the process. */
  readonly secretKey: string
  /** Requests per minute per credential unless the account overrides it. */
  readonly requestsPerMinute: number
  /** A pending task fails with `generation_timeout` after this long. */
  readonly generationTimeoutSeconds: number
  /** The first poll of an accepted task comes this long after acceptance, and grows with backoff. */
  readonly providerPollSeconds: number
}

export class Settings extends Context.Service<Settings, SettingsShape>()("lyre/core/services/Settings") {
  static readonly layer = (settings: SettingsShape) => Layer.succeed(Settings)(Settings.of(settings))
}

export const baseUrlOf = (settings: SettingsShape): string => `${settings.publicUrl}/api`

export const protectedResourceMetadataUrl = (settings: SettingsShape): string =>
  `${settings.publicUrl}/.well-known/oauth-protected-resource`
