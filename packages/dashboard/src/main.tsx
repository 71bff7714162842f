/** The account holder's dashboard: a shell with its pages under /dashboard. */
import { render } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { api, setCsrfToken } from "./api.ts"
import type { Outputs } from "./api.ts"
import { Keys } from "./pages/Keys.tsx"
import { Overview } from "./pages/Overview.tsx"
import { Personas } from "./pages/Personas.tsx"
import { Songs } from "./pages/Songs.tsx"
import { Uploads } from "./pages/Uploads.tsx"
import { Webhooks } from "./pages/Webhooks.tsx"
import { Show, useQuery } from "./ui.tsx"
import "./styles.css"

const pages = [
  { path: "/dashboard", label: "Overview", Page: Overview },
  { path: "/dashboard/keys", label: "API keys", Page: Keys },
  { path: "/dashboard/webhooks", label: "Webhooks", Page: Webhooks },
  { path: "/dashboard/songs", label: "Songs", Page: Songs },
  { path: "/dashboard/uploads", label: "Uploads", Page: Uploads },
  { path: "/dashboard/personas", label: "Personas", Page: Personas }
] as const

const current = () => pages.find((page) => page.path === location.pathname.replace(/\/$/, "")) ?? pages[0]

const Shell = (props: { readonly session: Outputs["account"]["session"] }) => {
  const [page, setPage] = useState(current)
  useEffect(() => {
    const onPop = () => setPage(current())
    addEventListener("popstate", onPop)
    return () => removeEventListener("popstate", onPop)
  }, [])
  // After a navigation, focus goes to the new page's content, as a page load would put a screen
  // reader there; on the first load it stays at the top, so the first Tab reaches the skip link.
  const navigated = useRef(false)
  useEffect(() => {
    document.title = `${page.label} · Lyre dashboard`
    if (navigated.current) document.getElementById("main")?.focus()
    navigated.current = true
  }, [page])
  const go = (event: MouseEvent, target: (typeof pages)[number]) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return
    event.preventDefault()
    history.pushState(null, "", target.path)
    setPage(target)
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <strong class="brand">Lyre</strong>
        <nav aria-label="Dashboard">
          <ul>
            {pages.map((target) => (
              <li key={target.path}>
                <a
                  href={target.path}
                  aria-current={target.path === page.path ? "page" : undefined}
                  onClick={(event) => go(event, target)}
                >
                  {target.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <form method="post" action="/signout" class="signout">
          <input type="hidden" name="csrf_token" value={props.session.csrf_token} />
          <span class="muted email">{props.session.email}</span>
          <button type="submit">Sign out</button>
        </form>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>{page.label}</h1>
        <page.Page />
      </main>
    </>
  )
}

const App = () => {
  const [session] = useQuery(async () => {
    const found = await api.account.session.query()
    setCsrfToken(found.csrf_token)
    return found
  })
  return <Show loaded={session}>{(value) => <Shell session={value} />}</Show>
}

const root = document.getElementById("app")
if (root !== null) render(<App />, root)
