/**
 * Audio before `ready` on the harness's fake upstream (issue 54): a song that reaches the
 * upstream's `first` stage, so its task offers previews, and stays pending until the test says.
 */
import { validSong } from "./harness.ts"
import type { TestServer } from "./harness.ts"

export interface StreamingSong {
  /** A generation request whose title makes the upstream stop at its `first` stage. */
  readonly request: typeof validSong & { readonly title: string }
  /** Sends the `complete` callback (once, however often called): the next look finds the song done. */
  readonly finish: () => void
}

export const streamingSong = (server: TestServer, tag: string): StreamingSong => {
  const title = `Streaming ${tag} ${Math.random().toString(36).slice(2, 8)}`
  server.upstream.control.onTitle(title, { callbacks: ["first"], pollsBeforeDone: Number.POSITIVE_INFINITY })
  let sent = false
  const finish = () => {
    if (sent) return
    sent = true
    const providerTaskId = server.upstream.control.submissionsFor(title)[0]?.taskId ?? ""
    void server.upstream.control.sendCallback(providerTaskId, "complete", { advance: true })
  }
  return { request: { ...validSong, title }, finish }
}
