// The dashboard's upload call carries an Idempotency-Key of its pick: the same pick sent again
// carries the same key (the server then answers the upload it made), another pick another key.
// The browser's XMLHttpRequest stood in for by one that records the headers and answers at once.

import { afterEach, describe, expect, it, vi } from "vitest"
import { sendUpload } from "../../src/tools/upload.ts"

const sentHeaders: Array<Record<string, string>> = []

class RecordingRequest {
  readonly upload: { onprogress: ((event: ProgressEvent) => void) | null } = { onprogress: null }
  withCredentials = false
  status = 0
  responseText = ""
  onload: (() => void) | null = null
  onerror: (() => void) | null = null
  private readonly headers: Record<string, string> = {}
  open(): void {}
  setRequestHeader(name: string, value: string): void {
    this.headers[name.toLowerCase()] = value
  }
  send(): void {
    sentHeaders.push(this.headers)
    // The connection dropped before any answer: the pick is the one to send again.
    queueMicrotask(() => this.onerror?.())
  }
}

afterEach(() => {
  vi.unstubAllGlobals()
  sentHeaders.length = 0
})

const keyOfSend = async (file: File): Promise<string | undefined> => {
  const sent = await sendUpload(file, "", () => {})
  expect(sent.ok).toBe(false)
  return sentHeaders[sentHeaders.length - 1]?.["idempotency-key"]
}

describe("the dashboard's upload call", () => {
  it("sends one Idempotency-Key per chosen file, the same when that pick is sent again", async () => {
    vi.stubGlobal("XMLHttpRequest", RecordingRequest)
    const pick = new File([new Uint8Array(8)], "take.wav", { type: "audio/wav" })
    const first = await keyOfSend(pick)
    expect(first).toMatch(/^upload-[0-9a-f]{32}$/)
    expect(await keyOfSend(pick)).toBe(first)
    // The same file chosen again is a new pick: a new upload, asked for on purpose.
    const again = new File([new Uint8Array(8)], "take.wav", { type: "audio/wav" })
    expect(await keyOfSend(again)).not.toBe(first)
  })
})
