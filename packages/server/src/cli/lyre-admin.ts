/**
 * `pnpm lyre-admin`: the operator's CLI over the admin API. It adds no rules of its own; the
 * server validates everything and its envelope is printed as the error.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"

const usage = `Usage: pnpm lyre-admin <command> [options] [--json]

  accounts create --email E --plan P [--password W] [--subscription-credits N] [--onetime-credits N]
                  [--credit-alert-threshold N] [--concurrency-limit N] [--requests-per-minute N]
  accounts get ACCOUNT_ID
  accounts update ACCOUNT_ID [--plan P] [--credit-alert-threshold N|default] [--concurrency-limit N|default]
                  [--requests-per-minute N|default]
  accounts credits ACCOUNT_ID [--subscription N] [--onetime N] [--reason TEXT]
  accounts ledger ACCOUNT_ID
  accounts exports ACCOUNT_ID   (the account's exports, newest first: WAV, MIDI, stems, timed lyrics)
  accounts uploads ACCOUNT_ID   (the account's kept uploads, newest first, with what listening heard)
  accounts personas ACCOUNT_ID  (the account's personas, newest first)
  accounts set-password ACCOUNT_ID (--password W | --password-stdin)   (8 to 200 characters)
  keys create ACCOUNT_ID --name NAME --scopes a,b [--expires-at ISO-8601]
  keys revoke KEY_ID
  models set MODEL (--available | --unavailable) [--retry-after SECONDS]
  webhooks create ACCOUNT_ID --url URL [--events job.completed,job.failed,credits.low,key.expiring,export.completed,export.failed,upload.ready,upload.failed,lyrics.completed,lyrics.failed,job.streaming]
  webhooks list ACCOUNT_ID
  webhooks update ENDPOINT_ID [--url URL] [--events a,b] [--enable | --disable]
  webhooks delete ENDPOINT_ID
  webhooks rotate-secret ENDPOINT_ID [--grace-period SECONDS]   (default 86400: both secrets sign meanwhile)
  webhooks ping ENDPOINT_ID
  webhooks deliveries ENDPOINT_ID
  webhooks attempts DELIVERY_ID
  webhooks redeliver DELIVERY_ID
  webhooks redeliver-event ENDPOINT_ID --event EVENT_ID
  oauth-clients create --client-id ID --name NAME --redirect-uris URI[,URI] [--refresh-tokens]
  oauth-clients list
  oauth-clients get CLIENT_ID
  oauth-clients delete CLIENT_ID   (its grants and tokens die with it)
  signing-keys rotate   (the old public key stays published until its tokens have expired)

Environment: LYRE_URL (default http://127.0.0.1:8080), ADMIN_TOKEN (default: DATA_DIR/admin-token).`

type Options = Record<string, string | boolean | undefined>

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
    email: { type: "string" },
    password: { type: "string" },
    plan: { type: "string" },
    "subscription-credits": { type: "string" },
    "onetime-credits": { type: "string" },
    "credit-alert-threshold": { type: "string" },
    "concurrency-limit": { type: "string" },
    "requests-per-minute": { type: "string" },
    subscription: { type: "string" },
    onetime: { type: "string" },
    reason: { type: "string" },
    name: { type: "string" },
    scopes: { type: "string" },
    "expires-at": { type: "string" },
    available: { type: "boolean" },
    unavailable: { type: "boolean" },
    "retry-after": { type: "string" },
    url: { type: "string" },
    events: { type: "string" },
    enable: { type: "boolean" },
    disable: { type: "boolean" },
    "grace-period": { type: "string" },
    event: { type: "string" },
    "password-stdin": { type: "boolean" },
    "client-id": { type: "string" },
    "redirect-uris": { type: "string" },
    "refresh-tokens": { type: "boolean" }
  }
})

const fail = (message: string): never => {
  process.stderr.write(`lyre-admin: ${message}\n`)
  process.exit(2)
}

const integer = (options: Options, flag: string): number | undefined => {
  const raw = options[flag]
  if (raw === undefined) return undefined
  if (typeof raw !== "string" || !/^-?\d+$/.test(raw)) return fail(`--${flag} must be a whole number`)
  return Number(raw)
}

/** A limit that may be reset to the default with the word `default`. */
const override = (options: Options, flag: string): number | null | undefined =>
  options[flag] === "default" ? null : integer(options, flag)

const defined = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined))

const adminToken = (): string => {
  const fromEnv = process.env["ADMIN_TOKEN"]
  if (fromEnv) return fromEnv
  const file = join(process.env["DATA_DIR"] ?? ".data", "admin-token")
  if (existsSync(file)) return readFileSync(file, "utf8").trim()
  return fail("set ADMIN_TOKEN (or run where DATA_DIR holds the embedded default's admin-token)")
}

const request = async (method: string, path: string, body?: unknown): Promise<unknown> => {
  const base = (process.env["LYRE_URL"] ?? "http://127.0.0.1:8080").replace(/\/+$/, "")
  const response = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken()}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  }).catch((error: unknown) => fail(`cannot reach ${base}: ${String(error)}`))
  const text = await response.text()
  const parsed: unknown = text === "" ? null : JSON.parse(text)
  if (!response.ok) {
    process.stderr.write(`${JSON.stringify(parsed, null, 2)}\n`)
    process.exit(1)
  }
  return parsed
}

const print = (result: unknown) => {
  if (values.json === true || typeof result !== "object" || result === null) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
    return
  }
  for (const [key, value] of Object.entries(result)) {
    process.stdout.write(`${key.padEnd(24)} ${typeof value === "object" ? JSON.stringify(value) : String(value)}\n`)
  }
}

const list = (raw: string | boolean | undefined): ReadonlyArray<string> | undefined =>
  raw === undefined
    ? undefined
    : String(raw)
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)

/** The password from `--password` or, kept out of shell history and `ps`, from standard input. */
const password = async (options: Options): Promise<string> => {
  if (options["password-stdin"] === true) {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "")
  }
  const given = options["password"]
  return typeof given === "string" ? given : fail("--password or --password-stdin is required")
}

const argument = (index: number, name: string): string => positionals[index] ?? fail(`missing ${name}\n\n${usage}`)

const run = async (): Promise<unknown> => {
  const [group, action] = positionals
  const o: Options = values
  switch (`${group ?? ""} ${action ?? ""}`) {
    case "accounts create":
      return request(
        "POST",
        "/accounts",
        defined({
          email: o["email"] ?? fail("--email is required"),
          plan: o["plan"] ?? fail("--plan is required"),
          password: o["password"],
          subscription_credits: integer(o, "subscription-credits"),
          onetime_credits: integer(o, "onetime-credits"),
          credit_alert_threshold: integer(o, "credit-alert-threshold"),
          concurrency_limit: integer(o, "concurrency-limit"),
          requests_per_minute: integer(o, "requests-per-minute")
        })
      )
    case "accounts get":
      return request("GET", `/accounts/${argument(2, "ACCOUNT_ID")}`)
    case "accounts update":
      return request(
        "PATCH",
        `/accounts/${argument(2, "ACCOUNT_ID")}`,
        defined({
          plan: o["plan"],
          credit_alert_threshold: override(o, "credit-alert-threshold"),
          concurrency_limit: override(o, "concurrency-limit"),
          requests_per_minute: override(o, "requests-per-minute")
        })
      )
    case "accounts credits":
      return request(
        "POST",
        `/accounts/${argument(2, "ACCOUNT_ID")}/credits`,
        defined({
          subscription: integer(o, "subscription"),
          onetime: integer(o, "onetime"),
          reason: o["reason"]
        })
      )
    case "accounts ledger":
      return request("GET", `/accounts/${argument(2, "ACCOUNT_ID")}/ledger`)
    case "accounts exports":
      return request("GET", `/accounts/${argument(2, "ACCOUNT_ID")}/exports`)
    case "accounts uploads":
      return request("GET", `/accounts/${argument(2, "ACCOUNT_ID")}/uploads`)
    case "accounts personas":
      return request("GET", `/accounts/${argument(2, "ACCOUNT_ID")}/personas`)
    case "accounts set-password": {
      const accountId = argument(2, "ACCOUNT_ID")
      await request("PUT", `/accounts/${accountId}/password`, { password: await password(o) })
      return { password_set: accountId }
    }
    case "oauth-clients create":
      return request("POST", "/oauth-clients", {
        client_id: o["client-id"] ?? fail("--client-id is required"),
        name: o["name"] ?? fail("--name is required"),
        redirect_uris: list(o["redirect-uris"]) ?? fail("--redirect-uris is required"),
        refresh_tokens: o["refresh-tokens"] === true
      })
    case "oauth-clients list":
      return request("GET", "/oauth-clients")
    case "oauth-clients get":
      return request("GET", `/oauth-clients/${encodeURIComponent(argument(2, "CLIENT_ID"))}`)
    case "oauth-clients delete":
      await request("DELETE", `/oauth-clients/${encodeURIComponent(argument(2, "CLIENT_ID"))}`)
      return { deleted: positionals[2] }
    case "signing-keys rotate":
      return request("POST", "/signing-keys/rotate")
    case "keys create":
      return request(
        "POST",
        `/accounts/${argument(2, "ACCOUNT_ID")}/keys`,
        defined({
          name: o["name"] ?? fail("--name is required"),
          scopes: String(o["scopes"] ?? fail("--scopes is required"))
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
          expires_at: o["expires-at"]
        })
      )
    case "keys revoke":
      await request("DELETE", `/keys/${argument(2, "KEY_ID")}`)
      return { revoked: positionals[2] }
    case "models set":
      if (o["available"] === o["unavailable"]) return fail("say --available or --unavailable")
      return request(
        "PUT",
        `/models/${argument(2, "MODEL")}`,
        defined({
          available: o["available"] === true,
          retry_after_seconds: integer(o, "retry-after")
        })
      )
    case "webhooks create":
      return request(
        "POST",
        `/accounts/${argument(2, "ACCOUNT_ID")}/webhook-endpoints`,
        defined({
          url: o["url"] ?? fail("--url is required"),
          events: list(o["events"])
        })
      )
    case "webhooks list":
      return request("GET", `/accounts/${argument(2, "ACCOUNT_ID")}/webhook-endpoints`)
    case "webhooks update":
      if (o["enable"] === true && o["disable"] === true) return fail("say --enable or --disable, not both")
      return request(
        "PATCH",
        `/webhook-endpoints/${argument(2, "ENDPOINT_ID")}`,
        defined({
          url: o["url"],
          events: list(o["events"]),
          enabled: o["enable"] === true ? true : o["disable"] === true ? false : undefined
        })
      )
    case "webhooks delete":
      await request("DELETE", `/webhook-endpoints/${argument(2, "ENDPOINT_ID")}`)
      return { deleted: positionals[2] }
    case "webhooks rotate-secret":
      return request(
        "POST",
        `/webhook-endpoints/${argument(2, "ENDPOINT_ID")}/rotate-secret`,
        defined({
          grace_period_seconds: integer(o, "grace-period")
        })
      )
    case "webhooks ping":
      return request("POST", `/webhook-endpoints/${argument(2, "ENDPOINT_ID")}/ping`)
    case "webhooks deliveries":
      return request("GET", `/webhook-endpoints/${argument(2, "ENDPOINT_ID")}/deliveries`)
    case "webhooks attempts":
      return request("GET", `/webhook-deliveries/${argument(2, "DELIVERY_ID")}/attempts`)
    case "webhooks redeliver":
      return request("POST", `/webhook-deliveries/${argument(2, "DELIVERY_ID")}/redeliver`)
    case "webhooks redeliver-event":
      return request("POST", `/webhook-endpoints/${argument(2, "ENDPOINT_ID")}/deliveries`, {
        event_id: o["event"] ?? fail("--event is required")
      })
    default:
      return fail(usage)
  }
}

if (values.help === true || positionals.length === 0) {
  process.stdout.write(`${usage}\n`)
} else {
  print(await run())
}
