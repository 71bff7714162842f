/**
 * `--play`: a song's stream handed to a local player while it is made (issue 54). The first of
 * mpv, ffplay and mpg123 found on `PATH` plays the address with no window and no prompt of its
 * own; the CLI's progress stays on standard error beside it.
 */
import { spawn } from "node:child_process"
import { accessSync, constants, statSync } from "node:fs"
import { delimiter, join } from "node:path"

export interface Player {
  readonly name: string
  /** The program's full path, as found on `PATH`. */
  readonly path: string
  readonly args: (url: string) => ReadonlyArray<string>
}

/** In order of preference: each plays an HTTP MP3 stream as it arrives and ends with it. */
export const players: ReadonlyArray<Omit<Player, "path">> = [
  { name: "mpv", args: (url) => ["--no-video", "--really-quiet", url] },
  { name: "ffplay", args: (url) => ["-nodisp", "-autoexit", "-loglevel", "quiet", url] },
  { name: "mpg123", args: (url) => ["-q", url] }
]

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** The first player installed, looked for on `PATH` as a shell would; undefined when none is. */
export const findPlayer = (env: NodeJS.ProcessEnv): Player | undefined => {
  const folders = (env["PATH"] ?? "").split(delimiter).filter((folder) => folder !== "")
  const suffixes = process.platform === "win32" ? [".exe", ""] : [""]
  for (const player of players) {
    for (const folder of folders) {
      for (const suffix of suffixes) {
        const path = join(folder, `${player.name}${suffix}`)
        if (executable(path)) return { ...player, path }
      }
    }
  }
  return undefined
}

export const noPlayerMessage = (url: string): string =>
  `No player found on PATH (looked for ${players.map((p) => p.name).join(", ")}): open ${url} in any audio player.`

/**
 * Starts the player on `url`; the promise settles when it exits (its code, or the error that kept
 * it from starting), so the CLI can wait for the song to be heard to its end.
 */
export const play = (player: Player, url: string, env: NodeJS.ProcessEnv): Promise<number | Error> =>
  new Promise((resolve) => {
    const child = spawn(player.path, [...player.args(url)], { env, stdio: "ignore" })
    child.on("error", (error) => resolve(error))
    child.on("exit", (code, signal) => resolve(code ?? (signal === null ? 0 : 1)))
  })
