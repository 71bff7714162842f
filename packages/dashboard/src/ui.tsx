/** Small pieces every page uses: loading a query, showing an error envelope, a confirmation. */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import type { z } from "zod"
import { errorTable } from "@lyre/core/domain/errors"
import { validationErrorFrom } from "@lyre/core/domain/validation"
import { isSignedOut, problemOf, signInUrl } from "./api.ts"
import type { ApiProblem } from "./api.ts"

export type Loaded<T> =
  | { readonly state: "loading" }
  | { readonly state: "ok"; readonly value: T }
  | { readonly state: "error"; readonly problem: ApiProblem }

/** Runs a query now and on `reload()`; a signed-out answer sends the browser to sign in. */
export const useQuery = <T,>(run: () => Promise<T>, deps: ReadonlyArray<unknown> = []) => {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" })
  const reload = useCallback(() => {
    run().then(
      (value) => setLoaded({ state: "ok", value }),
      (error: unknown) => {
        const problem = problemOf(error)
        if (isSignedOut(problem)) location.assign(signInUrl())
        setLoaded({ state: "error", problem })
      }
    )
  }, deps)
  useEffect(reload, [reload])
  return [loaded, reload] as const
}

/** Runs a change; answers the envelope of a failure (and sends a signed-out browser to sign in). */
export const attempt = async <T,>(
  run: () => Promise<T>
): Promise<{ ok: true; value: T } | { ok: false; problem: ApiProblem }> => {
  try {
    return { ok: true, value: await run() }
  } catch (error) {
    const problem = problemOf(error)
    if (isSignedOut(problem)) location.assign(signInUrl())
    return { ok: false, problem }
  }
}

/**
 * Checks a form's body with the interface's own schema before it is sent: bad input gets the
 * envelope the API would answer (the same rule, the same message) without a round trip.
 */
export const checkBody = <S extends z.ZodType>(
  schema: S,
  body: unknown
): { ok: true; value: z.output<S> } | { ok: false; problem: ApiProblem } => {
  const checked = schema.safeParse(body)
  if (checked.success) return { ok: true, value: checked.data }
  const error = validationErrorFrom(checked.error.issues, body)
  const row = errorTable[error._tag]
  return {
    ok: false,
    problem: {
      type: row.type,
      code: row.code,
      message: error.message,
      ...(error.param === undefined ? {} : { param: error.param })
    }
  }
}

export const Problem = (props: { readonly problem: ApiProblem | null; readonly id?: string }) =>
  props.problem === null ? null : (
    <p class="problem" role="alert" id={props.id}>
      {props.problem.message} <code>{props.problem.code}</code>
    </p>
  )

/** What stands where an answer will be: "Loading…", or the problem of the last try. */
export const Awaited = (props: { readonly problem: ApiProblem | null }) =>
  props.problem === null ? (
    <p class="muted" aria-busy="true">
      Loading…
    </p>
  ) : (
    <Problem problem={props.problem} />
  )

export const Show = <T,>(props: { readonly loaded: Loaded<T>; readonly children: (value: T) => ComponentChildren }) =>
  props.loaded.state === "ok" ? (
    props.children(props.loaded.value)
  ) : (
    <Awaited problem={props.loaded.state === "error" ? props.loaded.problem : null} />
  )

/**
 * A table that may be wider than a phone: it scrolls sideways, so it takes keyboard focus and
 * has a name (the region a screen reader announces), else keyboard users could not scroll it.
 */
export const ScrollRegion = (props: { readonly label: string; readonly children: ComponentChildren }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls takes focus, else keyboard users could not scroll it (axe's scrollable-region-focusable).
  <section class="scroll" aria-label={props.label} tabIndex={0}>
    {props.children}
  </section>
)

/** A modal question answered with the keyboard or the pointer; the native dialog traps focus. */
export const Confirm = (props: {
  readonly open: boolean
  readonly title: string
  readonly confirmLabel: string
  readonly onConfirm: () => void
  readonly onCancel: () => void
  readonly children?: ComponentChildren
}) => {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const dialog = ref.current
    if (dialog === null) return
    if (props.open && !dialog.open) dialog.showModal()
    if (!props.open && dialog.open) dialog.close()
  }, [props.open])
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="row">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  )
}

export const CopyButton = (props: { readonly text: string; readonly label: string }) => {
  const [copied, setCopied] = useState(false)
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(props.text).then(
          () => setCopied(true),
          () => setCopied(false)
        )
      }}
    >
      {copied ? "Copied" : props.label}
    </button>
  )
}
