/**
 * The service's own HTML pages (sign-in, consent, OAuth errors): one plain layout with inline
 * styles, no scripts and nothing from elsewhere; every interpolated text goes through `escapeText`.
 */
import type { ServerResponse } from "node:http"
import escapeHtml from "escape-html"

/** The only way text enters a page. */
export const escapeText = (text: string): string => escapeHtml(text)

const styles = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1f;background:#f5f5f7}
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=email],input[type=password]{width:100%;padding:.6rem .7rem;font-size:1rem;border:1px solid #767680;border-radius:.4rem}
button{margin-top:1.25rem;padding:.6rem 1.2rem;font-size:1rem;border-radius:.4rem;border:1px solid #2b2bb0;background:#3434c8;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#2b2bb0}
:focus-visible{outline:3px solid #f0a000;outline-offset:2px}
.error{padding:.6rem .8rem;border-radius:.4rem;background:#fde8e8;color:#8a1010;border:1px solid #e0a0a0}
ul.scopes{padding-left:1.2rem}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
footer{max-width:28rem;margin:0 auto;padding:0 1.5rem;color:#55555f;font-size:.875rem}
@media (max-width:30rem){main{margin:0;border-radius:0;box-shadow:none}}
`

/** A whole page; `body` must already be escaped HTML. */
export const page = (title: string, body: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeText(title)} · Lyre</title>
<style>${styles}</style>
</head>
<body>
<main>
<h1>${escapeText(title)}</h1>
${body}
</main>
<footer><p>Lyre</p></footer>
</body>
</html>`

/** Pages that hold forms or secrets are never cached nor framed. */
export const sendPage = (
  res: ServerResponse,
  status: number,
  html: string,
  headers: Record<string, string | Array<string>> = {}
): void => {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
    ...headers
  })
  res.end(html)
}

export const errorBlock = (message: string | undefined): string =>
  message === undefined ? "" : `<p class="error" role="alert">${escapeText(message)}</p>`
