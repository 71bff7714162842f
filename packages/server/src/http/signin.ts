/**
 * `GET /signin?return_to=<path>` shows the sign-in form, `POST /signin` checks it and sets the
 * session cookie, `POST /signout` ends the session. The authorize flow and the dashboard send
 * people here and get them back at `return_to` (same-site paths only).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, Option } from "effect"
import { Sessions } from "@lyre/core"
import type { AppRuntime } from "../app.ts"
import { errorBlock, escapeText, page, sendPage } from "./pages.ts"
import {
  clearedSessionCookie,
  clientAddress,
  cookiesAreSecure,
  csrfMatches,
  currentSession,
  newCsrfToken,
  preSessionCsrfCookie,
  readForm,
  readPreSessionCsrf,
  readSessionToken,
  safeReturnTo,
  sessionCookie
} from "./session.ts"
import type { RequestTarget } from "./requestTarget.ts"

export interface SignInOptions {
  readonly runtime: AppRuntime
  readonly publicUrl: string
}

const signInForm = (csrf: string, returnTo: string, email: string, error: string | undefined): string =>
  page(
    "Sign in to Lyre",
    `${errorBlock(error)}
<form method="post" action="/signin">
<input type="hidden" name="csrf_token" value="${escapeText(csrf)}">
<input type="hidden" name="return_to" value="${escapeText(returnTo)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeText(email)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`
  )

const redirect = (res: ServerResponse, location: string, cookies: Array<string> = []): void => {
  res.writeHead(303, {
    location,
    "cache-control": "no-store",
    ...(cookies.length > 0 ? { "set-cookie": cookies } : {})
  })
  res.end()
}

export const makeSignInHandler = (options: SignInOptions) => {
  const { runtime } = options
  const secure = cookiesAreSecure(options.publicUrl)

  const showForm = (res: ServerResponse, status: number, returnTo: string, email: string, error?: string) => {
    const csrf = newCsrfToken()
    sendPage(res, status, signInForm(csrf, returnTo, email, error), {
      "set-cookie": [preSessionCsrfCookie(csrf, secure)]
    })
  }

  const signIn = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req)
    const returnTo = safeReturnTo(form.get("return_to"))
    const email = form.get("email") ?? ""
    if (!csrfMatches(readPreSessionCsrf(req), form.get("csrf_token") ?? undefined)) {
      return showForm(res, 403, returnTo, email, "The form expired or did not come from this site. Please try again.")
    }
    const outcome = await runtime.runPromise(
      Sessions.use((sessions) => sessions.signIn(email, form.get("password") ?? "", clientAddress(req))).pipe(
        Effect.result
      )
    )
    if (outcome._tag === "Failure") {
      const failure = outcome.failure
      if (failure._tag === "SignInThrottled") {
        res.setHeader("retry-after", String(failure.retryAfterSeconds))
        return showForm(res, 429, returnTo, email, failure.message)
      }
      return showForm(res, 401, returnTo, email, failure.message)
    }
    const signedIn = outcome.success
    redirect(res, returnTo, [sessionCookie(signedIn.sessionToken, signedIn.expiresAt, secure)])
  }

  const signOut = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req)
    const session = await currentSession(runtime, req)
    const token = readSessionToken(req)
    if (Option.isNone(session) || token === undefined) return redirect(res, "/signin", [clearedSessionCookie(secure)])
    if (!csrfMatches(session.value.csrfToken, form.get("csrf_token") ?? undefined)) {
      return sendPage(res, 403, page("Sign-out refused", errorBlock("The form did not come from this site.")))
    }
    await runtime.runPromise(Sessions.use((sessions) => sessions.signOut(token)))
    redirect(res, "/signin", [clearedSessionCookie(secure)])
  }

  /** Answers `/signin` and `/signout`; false when the path is not one of them. */
  return async (req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> => {
    if (url.pathname === "/signin") {
      if (req.method === "GET" || req.method === "HEAD") {
        req.resume()
        showForm(res, 200, safeReturnTo(url.searchParams.get("return_to")), "")
        return true
      }
      if (req.method === "POST") {
        await signIn(req, res)
        return true
      }
    }
    if (url.pathname === "/signout" && req.method === "POST") {
      await signOut(req, res)
      return true
    }
    return false
  }
}
