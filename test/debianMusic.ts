/**
 * Vitest's global setup: the listening tests hear recordings Lyre did not make, game music from
 * Debian's packages (Fret on Fire's rock and metal songs, Wesnoth's orchestral and folk pieces),
 * installed here when missing (see debianPackage.ts).
 */
import { ensureDebianPackage } from "./debianPackage.ts"

/** Where Debian puts games' data; another folder laid out the same way will do. */
export const gamesDir = process.env["DEBIAN_GAMES_DIR"] ?? "/usr/share/games"

const packages = [
  ["fretsonfire-songs-sectoid", "fretsonfire/data/songs/sectoid/Feelings/song.ogg"],
  ["fretsonfire-songs-muldjord", "fretsonfire/data/songs/muldjord/chaos_god/song.ogg"],
  ["wesnoth-1.16-music", "wesnoth/1.16/data/core/music/battle.ogg"]
] as const

export default function ensureDebianMusic(): void {
  for (const [pkg, path] of packages)
    ensureDebianPackage({
      path: `${gamesDir}/${path}`,
      pkg,
      variable: "DEBIAN_GAMES_DIR",
      binary: "a folder laid out as Debian's /usr/share/games",
      need: "The listening tests need recordings from Debian's packages",
      tests: "the listening tests on outside recordings"
    })
}
