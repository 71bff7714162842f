/**
 * Core's services as the composition root assembles them, on a database of the test file's own
 * (PostgreSQL at DATABASE_URL, else PGlite in memory), with the in-memory limiter and deny-list
 * and a faked provider: what a service-lane test calls in place of an HTTP server. Uploads get a
 * file port that refuses every file, since no rule tested here reads one.
 */
import { Effect, Layer } from "effect"
import {
  Accounts,
  ApiKeys,
  coreLayer,
  defaultWebhookRetryDelaysSeconds,
  DenyList,
  Ids,
  InvalidAudio,
  randomBase62,
  RateLimiter,
  Settings,
  UploadFiles,
  Uploads
} from "../../src/index.ts"
import type { GenerateRequest, ModelName, Plan, SettingsShape } from "../../src/index.ts"
import { testDatabaseLayer } from "../../../../test/support/database.ts"
import { fakeProviderLayer } from "./provider.ts"

export const testSettings: SettingsShape = {
  publicUrl: "http://lyre.test",
  secretKey: randomBase62(48),
  requestsPerMinute: 60,
  generationTimeoutSeconds: 900,
  providerPollSeconds: 5,
  webhookRetryDelaysSeconds: defaultWebhookRetryDelaysSeconds,
  webhookAllowPrivate: false
}

const refusingUploadFiles = Layer.succeed(UploadFiles)(
  UploadFiles.of({
    receive: () => Effect.fail(new InvalidAudio({ message: "No file is kept in these tests.", param: "file" })),
    remove: () => Effect.void
  })
)

/** Every service a procedure may use, and the provider's script, on a fresh database. */
export const coreServicesLayer = Uploads.layer.pipe(
  Layer.provide(refusingUploadFiles),
  Layer.provideMerge(coreLayer),
  Layer.provideMerge(Layer.mergeAll(RateLimiter.layerMemory, DenyList.layerMemory, fakeProviderLayer, Ids.layer)),
  Layer.provideMerge(Settings.layer(testSettings)),
  Layer.provideMerge(testDatabaseLayer)
)

export interface CallerOptions {
  readonly plan?: Plan
  readonly subscription?: number
  readonly onetime?: number
  readonly scopes?: ReadonlyArray<string>
  readonly concurrencyLimit?: number
  readonly requestsPerMinute?: number
  readonly creditAlertThreshold?: number
  readonly keyExpiresAt?: Date
}

/** An account made as the admin API makes one, with one API key. */
export const makeCaller = Effect.fn("test.makeCaller")(function* (options: CallerOptions = {}) {
  const accounts = yield* Accounts
  const apiKeys = yield* ApiKeys
  const account = yield* accounts.create({
    email: `${randomBase62(12).toLowerCase()}@example.test`,
    plan: options.plan ?? "pro",
    subscription_credits: options.subscription ?? 1_000,
    onetime_credits: options.onetime ?? 0,
    credit_alert_threshold: options.creditAlertThreshold,
    concurrency_limit: options.concurrencyLimit,
    requests_per_minute: options.requestsPerMinute
  })
  const key = yield* apiKeys.create(account.id, {
    name: "test",
    scopes: options.scopes ?? ["profile", "music:generate"],
    expiresAt: options.keyExpiresAt ?? null
  })
  return { accountId: account.id, keyId: key.id, authorization: `Bearer ${key.key}` }
})

/** The principal a request with this key is admitted as (the credential and plan checks). */
export const principalOf = (authorization: string) => ApiKeys.use((apiKeys) => apiKeys.authenticate(authorization))

/** A valid create body for the model, after validation (defaults applied). */
export const generateRequest = (model: ModelName = "aether", title = "Morning"): GenerateRequest => ({
  style: "lo-fi piano, slow",
  title,
  lyrics: "la la la",
  instrumental: false,
  model
})
