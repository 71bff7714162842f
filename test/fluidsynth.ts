/**
 * Vitest's global setup: the listening tests render a MIDI file written in the test to WAV with
 * Debian's FluidSynth and its General MIDI SoundFont (outside material the engine did not make),
 * both installed here when missing (see debianPackage.ts).
 */
import { ensureDebianPackage } from "./debianPackage.ts"

export const fluidsynthPath = process.env["FLUIDSYNTH_PATH"] ?? "/usr/bin/fluidsynth"
export const soundFontPath = process.env["SOUNDFONT_PATH"] ?? "/usr/share/sounds/sf2/FluidR3_GM.sf2"

export default function ensureFluidsynth(): void {
  ensureDebianPackage({
    path: fluidsynthPath,
    pkg: "fluidsynth",
    variable: "FLUIDSYNTH_PATH",
    binary: "a fluidsynth binary",
    need: "The listening tests need FluidSynth",
    tests: "the listening tests"
  })
  ensureDebianPackage({
    path: soundFontPath,
    pkg: "fluid-soundfont-gm",
    variable: "SOUNDFONT_PATH",
    binary: "a General MIDI SoundFont (.sf2)",
    need: "The listening tests need a General MIDI SoundFont",
    tests: "the listening tests"
  })
}
