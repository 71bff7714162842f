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
  /** `WEBHOOK_RETRY_DELAYS`: seconds before each retry of a failed delivery; past the last, it is dead. */
  readonly webhookRetryDelaysSeconds: ReadonlyArray<number>
  /**
   * `WEBHOOK_ALLOW_PRIVATE`: endpoints on loopback and private addresses may register and receive,
   * and uploads may be fetched from them (the one address rule for URLs an account gives).
   */
  readonly webhookAllowPrivate: boolean
}

/** DESIGN.md section 4: 1 m, 5 m, 30 m, 2 h, 5 h, 10 h, 10 h (about three days in all). */
export const defaultWebhookRetryDelaysSeconds: ReadonlyArray<number> = [60, 300, 1800, 7200, 18000, 36000, 36000]

export class Settings extends Context.Service<Settings, SettingsShape>()("lyre/core/platform/Settings") {
  static readonly layer = (settings: SettingsShape) => Layer.succeed(Settings)(Settings.of(settings))
}

export const baseUrlOf = (settings: SettingsShape): string => `${settings.publicUrl}/api`

export const protectedResourceMetadataUrl = (settings: SettingsShape): string =>
  `${settings.publicUrl}/.well-known/oauth-protected-resource`
