/**
 * The browser session over HTTP, shared by the sign-in page, the authorize flow and the
 * dashboard: the `lyre_session` cookie, CSRF tokens, form bodies and safe return paths.
 * Session state itself lives in core's `Sessions`.
 */
import { randomBytes, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { parseCookie, stringifySetCookie } from "cookie"
import { Option } from "effect"
import { Sessions } from "@lyre/core"
import type { ActiveSession } from "@lyre/core"
import type { AppRuntime } from "../app.ts"

export const sessionCookieName = "lyre_session"
/** The CSRF token of forms shown before there is a session (the sign-in form): double-submitted. */
export const preSessionCsrfCookieName = "lyre_csrf"
const maxFormBytes = 16 * 1024

/** `Secure` cookies everywhere but plain-http loopback, where a browser would drop them. */
export const cookiesAreSecure = (publicUrl: string): boolean => {
  const url = new URL(publicUrl)
  if (url.protocol === "https:") return true
  return !["localhost", "127.0.0.1", "[::1]"].includes(url.hostname)
}

const cookies = (req: IncomingMessage): Record<string, string | undefined> => {
  const header = req.headers.cookie
  return header === undefined ? {} : parseCookie(header)
}

/** The session token the browser sent, if any; resolve it with `Sessions.resolve`. */
export const readSessionToken = (req: IncomingMessage): string | undefined => cookies(req)[sessionCookieName]

export const readPreSessionCsrf = (req: IncomingMessage): string | undefined => cookies(req)[preSessionCsrfCookieName]

/** `Set-Cookie` for a new session: `HttpOnly; SameSite=Lax; Path=/`, `Secure` unless loopback http. */
export const sessionCookie = (sessionToken: string, expiresAt: Date, secure: boolean): string =>
  stringifySetCookie({
    name: sessionCookieName,
    value: sessionToken,
    expires: expiresAt,
    path: "/",
    httpOnly: true,
    secure,
    sameSite: "lax"
  })

/** `Set-Cookie` that removes the session cookie (sign-out). */
export const clearedSessionCookie = (secure: boolean): string =>
  stringifySetCookie({
    name: sessionCookieName,
    value: "",
    expires: new Date(0),
    path: "/",
    httpOnly: true,
    secure,
    sameSite: "lax"
  })

export const newCsrfToken = (): string => randomBytes(24).toString("base64url")

/** `Set-Cookie` for the pre-session CSRF token; Strict, so no other site's form carries it. */
export const preSessionCsrfCookie = (token: string, secure: boolean): string =>
  stringifySetCookie({
    name: preSessionCsrfCookieName,
    value: token,
    path: "/",
    httpOnly: true,
    secure,
    sameSite: "strict"
  })

/** Constant-time comparison of a submitted CSRF token with the expected one; absent never matches. */
export const csrfMatches = (expected: string | undefined, submitted: string | undefined): boolean => {
  if (expected === undefined || submitted === undefined || expected.length === 0) return false
  const a = Buffer.from(expected)
  const b = Buffer.from(submitted)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The live session of this request, or none (no cookie, unknown, expired or signed out). */
export const currentSession = async (
  runtime: AppRuntime,
  req: IncomingMessage
): Promise<Option.Option<ActiveSession>> => {
  const token = readSessionToken(req)
  if (token === undefined) return Option.none()
  return runtime.runPromise(Sessions.use((sessions) => sessions.resolve(token)))
}

/** Reads an `application/x-www-form-urlencoded` body (at most 16 KiB); anything else reads as empty. */
export const readForm = async (req: IncomingMessage): Promise<URLSearchParams> => {
  const type = req.headers["content-type"] ?? ""
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of req) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (size > maxFormBytes) return new URLSearchParams()
    chunks.push(buffer)
  }
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return new URLSearchParams()
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"))
}

/**
 * A return path that stays on this site: it starts with one `/`, not `//` or `/\`, and has no
 * control characters. Anything else gives `fallback`.
 */
export const safeReturnTo = (value: string | null | undefined, fallback = "/dashboard"): string => {
  if (value === null || value === undefined || value.length === 0 || value.length > 2048) return fallback
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return fallback
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it refuses.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return fallback
  const resolved = new URL(value, "http://same.invalid")
  return resolved.host === "same.invalid" ? `${resolved.pathname}${resolved.search}` : fallback
}

/** The peer's address, for throttling failed sign-ins (proxies are not trusted). */
export const clientAddress = (req: IncomingMessage): string => req.socket.remoteAddress ?? "unknown"
