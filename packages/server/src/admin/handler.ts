/**
 * The operator's admin API under /admin/v1, bearer ADMIN_TOKEN. Without a configured token it
 * does not exist (404 everywhere). Bodies are validated with core's schemas and every error is
 * the interface's envelope.
 */
import { timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect } from "effect"
import type { z } from "zod"
import {
  Accounts,
  ApiKeys,
  ChangeCreditsBody,
  CreateAccountBody,
  CreateKeyBody,
  CreateOAuthClientBody,
  CreateWebhookEndpointBody,
  InvalidCredential,
  MethodNotAllowed,
  MissingCredential,
  Models,
  OAuth,
  Personas,
  RedeliverEventBody,
  RotateWebhookSecretBody,
  SetModelAvailabilityBody,
  SetPasswordBody,
  RouteNotFound,
  SigningKeys,
  SongTools,
  runToResult,
  UpdateAccountBody,
  UpdateWebhookEndpointBody,
  Uploads,
  validationErrorFrom,
  Webhooks
} from "@lyre/core"
import type { ApiError, CoreRuntime } from "@lyre/core"
import { readJsonBody, sendApiError, sendJson } from "@lyre/http"

export interface AdminOptions {
  readonly runtime: CoreRuntime
  readonly adminToken: string | null
  readonly resourceMetadataUrl: string
}

type Handler = (
  params: ReadonlyArray<string>,
  body: unknown
) => Effect.Effect<
  readonly [number, unknown],
  ApiError,
  Accounts | ApiKeys | Models | OAuth | Personas | SigningKeys | SongTools | Uploads | Webhooks
>

interface AdminRoute {
  readonly method: string
  readonly pattern: RegExp
  readonly handler: Handler
}

const validated = <S extends z.ZodType>(schema: S, body: unknown): Effect.Effect<z.infer<S>, ApiError> => {
  const parsed = schema.safeParse(body ?? {})
  return parsed.success ? Effect.succeed(parsed.data) : Effect.fail(validationErrorFrom(parsed.error.issues, body))
}

const id = "([A-Za-z0-9_]+)"

/** DESIGN.md section 8's webhook rows, then rotation, the attempt log, redelivery and ping. */
const webhookRoutes: ReadonlyArray<AdminRoute> = [
  {
    method: "POST",
    pattern: new RegExp(`^/accounts/${id}/webhook-endpoints$`),
    handler: ([accountId = ""], body) =>
      Effect.gen(function* () {
        const input = yield* validated(CreateWebhookEndpointBody, body)
        return [201, yield* Webhooks.use((webhooks) => webhooks.createEndpoint(accountId, input))] as const
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/accounts/${id}/webhook-endpoints$`),
    handler: ([accountId = ""]) =>
      Effect.map(
        Webhooks.use((webhooks) => webhooks.listEndpoints(accountId)),
        (data) => [200, { data }] as const
      )
  },
  {
    method: "PATCH",
    pattern: new RegExp(`^/webhook-endpoints/${id}$`),
    handler: ([endpointId = ""], body) =>
      Effect.gen(function* () {
        const patch = yield* validated(UpdateWebhookEndpointBody, body)
        return [200, yield* Webhooks.use((webhooks) => webhooks.updateEndpoint(endpointId, patch))] as const
      })
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/webhook-endpoints/${id}$`),
    handler: ([endpointId = ""]) =>
      Effect.as(
        Webhooks.use((webhooks) => webhooks.deleteEndpoint(endpointId)),
        [204, null] as const
      )
  },
  {
    method: "POST",
    pattern: new RegExp(`^/webhook-endpoints/${id}/rotate-secret$`),
    handler: ([endpointId = ""], body) =>
      Effect.gen(function* () {
        const input = yield* validated(RotateWebhookSecretBody, body)
        const grace = input.grace_period_seconds ?? 86_400
        return [200, yield* Webhooks.use((webhooks) => webhooks.rotateSecret(endpointId, grace))] as const
      })
  },
  {
    method: "POST",
    pattern: new RegExp(`^/webhook-endpoints/${id}/ping$`),
    handler: ([endpointId = ""]) =>
      Effect.map(
        Webhooks.use((webhooks) => webhooks.ping(endpointId)),
        (delivery) => [201, delivery] as const
      )
  },
  {
    method: "GET",
    pattern: new RegExp(`^/webhook-endpoints/${id}/deliveries$`),
    handler: ([endpointId = ""]) =>
      Effect.map(
        Webhooks.use((webhooks) => webhooks.deliveries(endpointId)),
        (data) => [200, { data }] as const
      )
  },
  {
    method: "POST",
    pattern: new RegExp(`^/webhook-endpoints/${id}/deliveries$`),
    handler: ([endpointId = ""], body) =>
      Effect.gen(function* () {
        const input = yield* validated(RedeliverEventBody, body)
        return [201, yield* Webhooks.use((webhooks) => webhooks.redeliverEvent(endpointId, input.event_id))] as const
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/webhook-deliveries/${id}/attempts$`),
    handler: ([deliveryId = ""]) =>
      Effect.map(
        Webhooks.use((webhooks) => webhooks.attempts(deliveryId)),
        (data) => [200, { data }] as const
      )
  },
  {
    method: "POST",
    pattern: new RegExp(`^/webhook-deliveries/${id}/redeliver$`),
    handler: ([deliveryId = ""]) =>
      Effect.map(
        Webhooks.use((webhooks) => webhooks.redeliver(deliveryId)),
        (delivery) => [201, delivery] as const
      )
  }
]
const clientId = "([A-Za-z0-9._-]+)"

/** OAuth clients (public, registered by the operator), account passwords, signing-key rotation. */
const oauthRoutes: ReadonlyArray<AdminRoute> = [
  {
    method: "POST",
    pattern: /^\/oauth-clients$/,
    handler: (_, body) =>
      Effect.gen(function* () {
        const input = yield* validated(CreateOAuthClientBody, body)
        return [201, yield* OAuth.use((oauth) => oauth.createClient(input))] as const
      })
  },
  {
    method: "GET",
    pattern: /^\/oauth-clients$/,
    handler: () =>
      Effect.map(
        OAuth.use((oauth) => oauth.listClients),
        (data) => [200, { data }] as const
      )
  },
  {
    method: "GET",
    pattern: new RegExp(`^/oauth-clients/${clientId}$`),
    handler: ([client = ""]) =>
      Effect.map(
        OAuth.use((oauth) => oauth.getClient(client)),
        (view) => [200, view] as const
      )
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/oauth-clients/${clientId}$`),
    handler: ([client = ""]) =>
      Effect.as(
        OAuth.use((oauth) => oauth.deleteClient(client)),
        [204, null] as const
      )
  },
  {
    method: "PUT",
    pattern: new RegExp(`^/accounts/${id}/password$`),
    handler: ([accountId = ""], body) =>
      Effect.gen(function* () {
        const input = yield* validated(SetPasswordBody, body)
        yield* Accounts.use((accounts) => accounts.setPassword(accountId, input.password))
        return [204, null] as const
      })
  },
  {
    method: "POST",
    pattern: /^\/signing-keys\/rotate$/,
    handler: () =>
      Effect.map(
        SigningKeys.use((keys) => keys.rotate),
        (rotated) => [201, rotated] as const
      )
  }
]

const routes: ReadonlyArray<AdminRoute> = [
  {
    method: "POST",
    pattern: /^\/accounts$/,
    handler: (_, body) =>
      Effect.gen(function* () {
        const input = yield* validated(CreateAccountBody, body)
        return [201, yield* Accounts.use((accounts) => accounts.create(input))] as const
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/accounts/${id}$`),
    handler: ([accountId = ""]) =>
      Effect.map(
        Accounts.use((accounts) => accounts.get(accountId)),
        (view) => [200, view] as const
      )
  },
  {
    method: "PATCH",
    pattern: new RegExp(`^/accounts/${id}$`),
    handler: ([accountId = ""], body) =>
      Effect.gen(function* () {
        const patch = yield* validated(UpdateAccountBody, body)
        return [200, yield* Accounts.use((accounts) => accounts.update(accountId, patch))] as const
      })
  },
  {
    method: "POST",
    pattern: new RegExp(`^/accounts/${id}/credits$`),
    handler: ([accountId = ""], body) =>
      Effect.gen(function* () {
        const change = yield* validated(ChangeCreditsBody, body)
        return [200, yield* Accounts.use((accounts) => accounts.changeCredits(accountId, change))] as const
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/accounts/${id}/ledger$`),
    handler: ([accountId = ""]) =>
      Effect.map(
        Accounts.use((accounts) => accounts.ledger(accountId)),
        (data) => [200, { data }] as const
      )
  },
  {
    method: "GET",
    pattern: new RegExp(`^/accounts/${id}/exports$`),
    handler: ([accountId = ""]) =>
      Effect.gen(function* () {
        yield* Accounts.use((accounts) => accounts.get(accountId))
        const data = yield* SongTools.use((tools) => tools.exportsOfAccount(accountId, 100))
        return [200, { data }] as const
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/accounts/${id}/uploads$`),
    handler: ([accountId = ""]) =>
      Effect.gen(function* () {
        yield* Accounts.use((accounts) => accounts.get(accountId))
        const data = yield* Uploads.use((uploads) => uploads.uploadsOfAccount(accountId, 100))
        return [200, { data }] as const
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/accounts/${id}/personas$`),
    handler: ([accountId = ""]) =>
      Effect.gen(function* () {
        yield* Accounts.use((accounts) => accounts.get(accountId))
        const data = yield* Personas.use((personas) => personas.personasOfAccount(accountId, 100))
        return [200, { data }] as const
      })
  },
  {
    method: "POST",
    pattern: new RegExp(`^/accounts/${id}/keys$`),
    handler: ([accountId = ""], body) =>
      Effect.gen(function* () {
        const input = yield* validated(CreateKeyBody, body)
        const created = yield* ApiKeys.use((keys) =>
          keys.create(accountId, {
            name: input.name,
            scopes: input.scopes,
            expiresAt: input.expires_at == null ? null : new Date(input.expires_at)
          })
        )
        return [201, created] as const
      })
  },
  {
    method: "PUT",
    pattern: new RegExp(`^/models/${id}$`),
    handler: ([model = ""], body) =>
      Effect.gen(function* () {
        const change = yield* validated(SetModelAvailabilityBody, body)
        return [200, yield* Models.use((models) => models.setAvailability(model, change))] as const
      })
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/keys/${id}$`),
    handler: ([keyId = ""]) =>
      Effect.as(
        ApiKeys.use((keys) => keys.revoke(keyId)),
        [204, null] as const
      )
  },
  ...webhookRoutes,
  ...oauthRoutes
]

const tokenMatches = (expected: string, authorization: string | undefined): boolean => {
  const given = /^Bearer +(\S+)$/i.exec(authorization ?? "")?.[1]
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Handles a path below `/admin/v1`. */
export const makeAdminHandler =
  (options: AdminOptions) =>
  async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const fail = (error: ApiError) => sendApiError(res, error, options.resourceMetadataUrl)
    if (options.adminToken === null) {
      req.resume()
      return fail(new RouteNotFound({ message: `No route ${req.method} /admin/v1${path}.` }))
    }
    if (!tokenMatches(options.adminToken, req.headers.authorization)) {
      req.resume()
      return fail(
        req.headers.authorization === undefined
          ? new MissingCredential({ message: "Send the admin token as `Authorization: Bearer <ADMIN_TOKEN>`." })
          : new InvalidCredential({ message: "The admin token is not valid." })
      )
    }
    const method = req.method ?? "GET"
    const candidates = routes.filter((route) => route.pattern.test(path))
    const route = candidates.find((candidate) => candidate.method === method)
    if (route === undefined) {
      req.resume()
      return fail(
        candidates.length > 0
          ? new MethodNotAllowed({
              message: `${method} is not allowed on ${path}.`,
              allow: candidates.map((c) => c.method)
            })
          : new RouteNotFound({ message: `No route ${method} /admin/v1${path}.` })
      )
    }
    const params = route.pattern.exec(path)?.slice(1) ?? []
    let body: unknown
    if (method === "POST" || method === "PATCH" || method === "PUT") {
      const read = await readJsonBody(req)
      if (!read.ok) return fail(read.error)
      body = read.value
    } else {
      req.resume()
    }
    const result = await runToResult(options.runtime, route.handler(params, body))
    if (!result.ok) return fail(result.error)
    const [status, payload] = result.value
    if (status === 204) {
      res.writeHead(204)
      res.end()
      return
    }
    sendJson(res, status, payload)
  }
