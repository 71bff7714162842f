/**
 * Content credentials: the track's file as the browser downloads it, read and validated here by
 * c2pa-rs (the client library's reader, `@lyre/provenance/reader`) rather than told by the
 * service (decision 0130): what made it, from what, when, signed by whom, valid or not. c2pa-rs
 * (about 9 MB of WebAssembly) is fetched only when the tool is first opened.
 */
import { useEffect, useState } from "preact/hooks"
import wasmUrl from "@contentauth/c2pa-wasm/c2pa.wasm?url"
import { loadC2pa, readAsset } from "@lyre/provenance/reader"
import type { ContentCredentialsReport, ManifestSummary } from "@lyre/provenance/reader"
import { formatDate } from "../api.ts"
import type { Track } from "./source.ts"

type Read =
  | { readonly state: "reading" }
  | { readonly state: "read"; readonly report: ContentCredentialsReport }
  | { readonly state: "failed"; readonly message: string }

/** The formats Lyre embeds a manifest in, by the served type, else by the address. */
const embeddedFormatOf = (contentType: string, url: string): "audio/mpeg" | "audio/wav" | null => {
  const type = `${contentType} ${new URL(url, location.href).pathname}`
  if (/audio\/(mpeg|mp3)|\.mp3\b/i.test(type)) return "audio/mpeg"
  if (/audio\/(x-)?wav|\.wav\b/i.test(type)) return "audio/wav"
  return null
}

const readTrack = async (url: string, signal: AbortSignal): Promise<ContentCredentialsReport> => {
  const [response] = await Promise.all([fetch(url, { signal }), loadC2pa(() => fetch(wasmUrl))])
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  const format = embeddedFormatOf(response.headers.get("content-type") ?? "", url)
  const bytes = new Uint8Array(await response.arrayBuffer())
  return format === null ? { state: "Missing", manifests: [], failures: [] } : readAsset(bytes, format)
}

const untrusted = "signingCredential.untrusted"

/** What the state means to a listener. */
const verdict = (report: ContentCredentialsReport): string => {
  switch (report.state) {
    case "Trusted":
      return "Valid, signed by a trusted signer: the file is as it was signed."
    case "Valid":
      return report.failures.some((failure) => failure.code === untrusted)
        ? "Valid: the file is as it was signed. Its signer is on no trust list this page knows (the operator's own certificate)."
        : "Valid: the file is as it was signed."
    case "Invalid":
      return "Invalid: the file was changed after it was signed, or its signature does not hold."
    case "Missing":
      return "Missing: this file carries no content credentials."
  }
}

const actionLabels: Readonly<Record<string, string>> = {
  "c2pa.created": "Created",
  "c2pa.opened": "Opened",
  "c2pa.edited": "Edited",
  "c2pa.transcoded": "Transcoded",
  "c2pa.converted": "Converted"
}

const sourceTypeLabels: Readonly<Record<string, string>> = {
  trainedAlgorithmicMedia: "by a trained AI model",
  algorithmicMedia: "by an algorithm",
  compositeWithTrainedAlgorithmicMedia: "mixing the user's audio with a trained AI model's",
  compositeSynthetic: "mixing the user's audio with generated audio"
}

const sourceTypeOf = (url: string | null): string | null =>
  url === null ? null : (sourceTypeLabels[url.split("/").pop() ?? ""] ?? url)

/** The signature's time-stamp when it has one, else the time its signer gave the last action. */
const whenOf = (manifest: ManifestSummary): string | null =>
  manifest.signedAt ?? manifest.actions.findLast((action) => action.when !== null)?.when ?? null

const Manifest = (props: { readonly manifest: ManifestSummary; readonly first: boolean }) => {
  const { manifest } = props
  return (
    <li data-manifest={manifest.label}>
      <strong>{props.first ? "This file" : `Its ingredient ${manifest.title ?? ""}`}</strong>
      <dl class="analysis">
        <dt>What made it</dt>
        <dd data-testid="credentials-made">
          {manifest.actions.map((action, index) => (
            <span key={index} data-action={action.action}>
              {index > 0 && ", then "}
              {actionLabels[action.action] ?? action.action}
              {action.digitalSourceType !== null && ` ${sourceTypeOf(action.digitalSourceType)}`}
              {action.softwareAgent !== null && ` (${action.softwareAgent})`}
            </span>
          ))}
          {manifest.claimGenerator !== null && `, with ${manifest.claimGenerator}`}
        </dd>
        <dt>From what</dt>
        <dd data-testid="credentials-from">
          {manifest.ingredients.length === 0
            ? "nothing: made new"
            : manifest.ingredients.map((ingredient) => ingredient.title).join(", ")}
        </dd>
        <dt>When</dt>
        <dd data-testid="credentials-when">{formatDate(whenOf(manifest))}</dd>
        <dt>Signed by</dt>
        <dd data-testid="credentials-signer">{manifest.signedBy ?? "—"}</dd>
      </dl>
    </li>
  )
}

export const Credentials = (props: { readonly track: Track }) => {
  const [read, setRead] = useState<Read>({ state: "reading" })
  useEffect(() => {
    const abort = new AbortController()
    readTrack(props.track.audio_url, abort.signal).then(
      (report) => setRead({ state: "read", report }),
      (error: unknown) => {
        if (!abort.signal.aborted) setRead({ state: "failed", message: String(error) })
      }
    )
    return () => abort.abort()
  }, [props.track.audio_url])
  if (read.state === "reading")
    return (
      <p class="muted" aria-busy="true">
        Reading the file's content credentials…
      </p>
    )
  if (read.state === "failed")
    return (
      <p class="problem" role="alert">
        Could not read the file's content credentials: {read.message}
      </p>
    )
  const { report } = read
  const failures = report.failures.filter((failure) => failure.code !== untrusted)
  return (
    <div data-testid="content-credentials" data-state={report.state}>
      <p>
        <span class={`status ${report.state === "Invalid" || report.state === "Missing" ? "failed" : "ready"}`}>
          {report.state}
        </span>{" "}
        {verdict(report)}
      </p>
      {failures.length > 0 && (
        <ul data-testid="credentials-failures">
          {failures.map((failure) => (
            <li key={failure.code}>
              <code>{failure.code}</code> {failure.explanation}
            </li>
          ))}
        </ul>
      )}
      <ol class="plain">
        {report.manifests.map((manifest, index) => (
          <Manifest key={manifest.label} manifest={manifest} first={index === 0} />
        ))}
      </ol>
    </div>
  )
}
