/**
 * Vitest's global setup: the loudness tests measure files against Debian's ffmpeg (its `ebur128`
 * filter, an outside BS.1770 meter), installed here when missing (see debianPackage.ts).
 */
import { ensureDebianPackage } from "./debianPackage.ts"

export const ffmpegPath = process.env["FFMPEG_PATH"] ?? "/usr/bin/ffmpeg"

export default function ensureFfmpeg(): void {
  ensureDebianPackage({
    path: ffmpegPath,
    pkg: "ffmpeg",
    variable: "FFMPEG_PATH",
    binary: "an ffmpeg binary",
    need: "The loudness tests need ffmpeg",
    tests: "the loudness tests"
  })
}
