/**
 * A song heard while it is made (issue 54, decision 0128): while `--wait` follows a generation,
 * the first poll that finds its `previews` prints each take's stream address, and with `--play`
 * hands the first take's to a local player (or says that none is installed). A task found ready
 * before any stream was seen is played from its final file.
 */
import type { GenerationTask } from "@lyre/client"
import type { Display } from "./display.ts"
import { findPlayer, noPlayerMessage, play } from "./player.ts"

/** What `--play` says in a command's help. */
export const playHelp =
  "wait, and hand the song's stream to a local player (mpv, ffplay or mpg123) as soon as it exists"

export interface Listener {
  /** Told the task at each poll. */
  readonly heard: (task: GenerationTask) => void
  /** Once the task is ready: plays it if nothing was played yet, then waits for the player to end. */
  readonly finish: (task: GenerationTask) => Promise<void>
}

export const listenerFor = (display: Display, env: NodeJS.ProcessEnv, wantsPlay: boolean): Listener => {
  let told = false
  let playing: Promise<void> | undefined
  const start = (url: string, what: string) => {
    if (!wantsPlay || playing !== undefined) return
    const player = findPlayer(env)
    if (player === undefined) {
      display.note(noPlayerMessage(url))
      playing = Promise.resolve()
      return
    }
    display.note(`Playing ${what} in ${player.name}.`)
    playing = play(player, url, env).then((ended) => {
      if (ended instanceof Error) display.note(`${player.name} could not play it: ${ended.message}`)
      else if (ended !== 0) display.note(`${player.name} ended with exit code ${ended}.`)
    })
  }
  return {
    heard: (task) => {
      if (told || task.status !== "pending" || task.previews.length === 0) return
      told = true
      for (const preview of task.previews) {
        display.note(`Listen while it is made (take ${preview.index + 1}): ${preview.stream_url}`)
      }
      const [first] = task.previews
      if (first !== undefined) start(first.stream_url, `take ${first.index + 1} while it is made`)
    },
    finish: async (task) => {
      const [track] = task.tracks
      if (task.status === "ready" && track !== undefined) start(track.audio_url, `take ${track.index + 1}`)
      await playing
    }
  }
}
