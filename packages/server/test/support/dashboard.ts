/**
 * The dashboard's side of the tests: an account holder with a password, signed in, and raw calls
 * of the tRPC procedures with (or without) the session cookie and its CSRF token.
 */
import { randomBase62 } from "@lyre/core"
import type { ServerConfig } from "../../src/config.ts"
import { startTestServer } from "./harness.ts"
import type { Json, TestServer } from "./harness.ts"
import { signIn as signInThroughForm } from "./oauth.ts"

export interface Holder {
  readonly id: string
  readonly email: string
  readonly password: string
}

export const createHolder = async (
  server: TestServer,
  options: { readonly plan?: string; readonly subscription?: number; readonly onetime?: number } = {}
): Promise<Holder> => {
  const email = `${randomBase62(10).toLowerCase()}@example.test`
  const password = `pw-${randomBase62(16)}`
  const made = await server.admin("POST", "/accounts", {
    email,
    password,
    plan: options.plan ?? "pro",
    subscription_credits: options.subscription ?? 1_000,
    onetime_credits: options.onetime ?? 0
  })
  if (made.status !== 201) throw new Error(`account: ${JSON.stringify(made.body)}`)
  return { id: String(made.body["id"]), email, password }
}

export interface Session {
  readonly cookie: string
  readonly csrf: string
}

export interface DashboardServer {
  readonly server: TestServer
  /** A signed-in session of the holder: its cookie (`name=value`) and its CSRF token. */
  readonly signIn: (holder: Holder) => Promise<Session>
}

/** A test server whose account holders sign in through the real sign-in form. */
export const startDashboardServer = async (overrides: Partial<ServerConfig> = {}): Promise<DashboardServer> => {
  const server = await startTestServer(overrides)
  return {
    server,
    signIn: async (holder) => {
      const cookie = await signInThroughForm(server, holder.email, holder.password)
      const session = await trpc(server, "query", "account.session", undefined, { cookie })
      if (session.status !== 200) throw new Error(`session: ${JSON.stringify(session.body)}`)
      return { cookie, csrf: String(session.body["result"]?.["data"]?.["csrf_token"]) }
    }
  }
}

/** One tRPC call over HTTP, as any client sends it (no batching, no transformer). */
export const trpc = async (
  server: TestServer,
  type: "query" | "mutation",
  path: string,
  input: unknown,
  options: { readonly cookie?: string; readonly csrf?: string; readonly headers?: Record<string, string> } = {}
): Promise<{ status: number; body: Json }> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.cookie !== undefined) headers["cookie"] = options.cookie
  if (options.csrf !== undefined) headers["x-csrf-token"] = options.csrf
  const url =
    type === "query"
      ? `${server.url}/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`
      : `${server.url}/trpc/${path}`
  const response = await fetch(url, {
    method: type === "query" ? "GET" : "POST",
    headers: type === "mutation" ? { "content-type": "application/json", ...headers } : headers,
    ...(type === "mutation" ? { body: JSON.stringify(input ?? {}) } : {})
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? {} : (JSON.parse(text) as Json) }
}

/** The interface's envelope inside a tRPC error answer. */
export const envelopeOf = (body: Json): Json => body["error"]?.["data"]?.["error"] ?? {}
