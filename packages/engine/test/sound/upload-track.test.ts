// An upload as the root of a track, on the engine alone: its WAV export is its audio, its MIDI
// export its transcription, and an extension of it is its audio sample for sample up to
// continue_at, then a continuation composed in its tempo and key. The upload is a WAV written
// here with wavefile; files are read back with wavefile and @tonejs/midi.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Midi } from "@tonejs/midi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sourceTake } from "../../src/arrange/index.ts"
import { sheetOf } from "../../src/arrange/sheet.ts"
import { chordNamed } from "../../src/arrange/uploadSheet.ts"
import { exportTrack, extensionSources, renderExtension, segmentsOf, trackWav } from "../../src/song.ts"
import type { PcmCacheOptions } from "../../src/pcm-cache.ts"
import type { TrackSource, UploadRoot } from "../../src/types.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

const rate = 44_100
const seconds = 10
let dir: string
let samples: Int16Array
let upload: TrackSource
/**
 * The engine's PCM cache, as in service: a take rendered once (an extension's) is read back by
 * the WAV export after it rather than rendered again.
 */
let cache: PcmCacheOptions

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lyre-upload-track-"))
  cache = { dir: join(dir, "pcm"), maxBytes: 1024 ** 3 }
  samples = Int16Array.from({ length: rate * seconds * 2 }, (_, i) =>
    Math.round(9000 * Math.sin((i >> 1) / 15) + 3000 * Math.sin((i >> 1) / 7))
  )
  const wav = new WaveFile()
  wav.fromScratch(2, rate, "16", Array.from(samples))
  const path = join(dir, "source.wav")
  writeFileSync(path, wav.toBuffer())
  const root: UploadRoot = {
    id: "upl_test",
    audioPath: path,
    contentType: "audio/wav",
    duration: seconds,
    analysis: {
      bpm: 96,
      key: "D minor",
      time_signature: "4/4",
      loudness_lufs: -14,
      beats: Array.from({ length: 16 }, (_, i) => 0.25 + i * 0.625),
      chords: [{ start: 0.25, end: 10, chord: "Dm" }]
    },
    transcription: {
      notes: [
        { pitch: 62, start: 0.25, end: 0.8, velocity: 0.7 },
        { pitch: 65, start: 0.875, end: 1.4, velocity: 0.6 }
      ]
    }
  }
  upload = {
    request: { style: "96 bpm, in D minor", title: "My upload", lyrics: null, instrumental: true, model: "aether" },
    taskId: root.id,
    index: 0,
    upload: root
  }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const pcmOf = (bytes: Uint8Array): Int16Array => {
  const wav = new WaveFile(bytes)
  const data = (wav as unknown as { data: { samples: Uint8Array } }).data.samples
  return new Int16Array(data.buffer, data.byteOffset, data.length >> 1)
}

/**
 * How far below the mix (dB) what the stems leave of it lies (they add up when this is very low),
 * and the share of samples left out of that because a stem was at a rail of its 16-bit file: a part
 * can pass full scale alone where the mix does not (a kick under a bass that cancels it), and its
 * file clips there (engine README, "Known limits").
 */
const stemsResidual = (
  parts: ReadonlyArray<Int16Array>,
  mix: Int16Array
): { readonly db: number; readonly railed: number } => {
  let residual = 0
  let signal = 0
  let railed = 0
  for (let i = 0; i < mix.length; i++) {
    let sum = 0
    let atRail = false
    for (const p of parts) {
      const x = p[i] ?? 0
      sum += x
      atRail ||= x === 32767 || x === -32768
    }
    if (atRail) {
      railed++
      continue
    }
    residual += (sum - (mix[i] ?? 0)) ** 2
    signal += (mix[i] ?? 0) ** 2
  }
  return { db: 10 * Math.log10(residual / signal), railed: railed / mix.length }
}

const expectStemsAddUp = (parts: ReadonlyArray<Int16Array>, mix: Int16Array): void => {
  const { db, railed } = stemsResidual(parts, mix)
  expect(db).toBeLessThan(-60)
  expect(railed).toBeLessThan(0.001)
}

/** Samples (interleaved) where two PCMs differ, among the first `count`. */
const differingSamples = (a: Int16Array, b: Int16Array, from: number, to: number): number => {
  let n = 0
  for (let i = from; i < to; i++) if (a[i] !== b[i]) n++
  return n
}

describe("an upload's own track", () => {
  it("its WAV export is its audio, within one step of 16 bits", async () => {
    const exported = await exportTrack(upload, "wav", {}, null)
    const pcm = pcmOf(exported.files[0]?.bytes ?? new Uint8Array(0))
    expect(pcm.length).toBe(samples.length)
    let worst = 0
    for (let i = 0; i < pcm.length; i++) worst = Math.max(worst, Math.abs((pcm[i] ?? 0) - (samples[i] ?? 0)))
    expect(worst).toBeLessThanOrEqual(1)
  })

  it("its MIDI export is its transcription, at its tempo", async () => {
    const exported = await exportTrack(upload, "midi", {}, null)
    const midi = new Midi(exported.files[0]?.bytes ?? new Uint8Array(0))
    const notes = midi.tracks.flatMap((t) => t.notes)
    expect(notes.map((n) => n.midi)).toEqual([62, 65])
    expect(notes[0]?.time).toBeCloseTo(0.25, 2)
    expect(midi.header.tempos[0]?.bpm).toBeCloseTo(96, 1)
  })

  it("has no words to time", async () => {
    await expect(exportTrack(upload, "timed_lyrics", {}, null)).rejects.toThrow()
  })
})

describe("an extension of an upload", { timeout: 120_000 }, () => {
  // Both tests read the same extension: the second's WAV export is the first's render, cached.
  const extension = (): TrackSource => {
    const [take] = extensionSources(upload, 6, upload.request, "gen_extension", 1)
    if (take === undefined) throw new Error("no take")
    return take
  }

  it("is the upload sample for sample up to continue_at, then a continuation in its tempo and key on its bar grid", async () => {
    const continueAt = 6
    const take = extension()
    const track = await renderExtension(take, {}, cache)
    expect(track.duration).toBeGreaterThan(continueAt + 20)
    const source = pcmOf(await trackWav(upload, {}, null))
    const extended = pcmOf(await trackWav(take, {}, cache))
    const cut = Math.round(continueAt * rate) * 2
    let differing = 0
    for (let i = 0; i < cut; i++) if (extended[i] !== source[i]) differing++
    expect(differing).toBe(0)
    const segments = segmentsOf(take, {})
    const continuation = segments[segments.length - 1]
    expect(continuation?.take.spec.bpm).toBe(96)
    expect(continuation?.take.spec.tonic).toBe(2)
    expect(continuation?.take.spec.minor).toBe(true)
    // Its bars start on the upload's: the first beat (0.25 s) plus whole bars of 2.5 s.
    expect(((continuation?.offset ?? 0) - 0.25) / 2.5).toBeCloseTo(
      Math.round(((continuation?.offset ?? 0) - 0.25) / 2.5),
      6
    )
  })

  it("has the upload as its stem `upload` up to continue_at, and stems that add up to its mix", async () => {
    const continueAt = 6
    const take = extension()
    const mix = pcmOf(await trackWav(take, {}, cache))
    const stems = await exportTrack(take, "stems", {}, cache)
    const names = stems.files.map((f) => f.stem)
    expect(names[names.length - 1]).toBe("upload")
    expect(names.length).toBeGreaterThan(1)
    const parts = stems.files.map((f) => pcmOf(f.bytes))
    for (const p of parts) expect(p.length).toBe(mix.length)
    const own = parts[parts.length - 1] as Int16Array
    const cut = Math.round(continueAt * rate) * 2
    expect(differingSamples(own, samples, 0, cut)).toBe(0)
    // The continuation's parts are silent before it: up to continue_at the upload is the mix.
    for (const p of parts.slice(0, -1)) expect(p.subarray(0, cut).every((x) => x === 0)).toBe(true)
    expectStemsAddUp(parts, mix)
  })
})

describe("an edit of an upload", { timeout: 120_000 }, () => {
  it("is the upload sample for sample outside its bars, its stems the upload there and the new take inside, adding up to its mix", async () => {
    const edited: TrackSource = {
      request: { ...upload.request, style: "96 bpm, in D minor, piano" },
      taskId: "upload-edit",
      index: 0,
      derives: { kind: "edit", source: upload, start: 3, end: 6 }
    }
    const mix = pcmOf(await trackWav(edited, {}, null))
    expect(mix.length).toBe(samples.length)
    // The span is widened to the bar lines around it (bars of 2.5 s from the first beat, 0.25 s).
    const before = Math.round(2.75 * rate) * 2
    const after = Math.round(7.75 * rate) * 2
    expect(differingSamples(mix, samples, 0, before)).toBe(0)
    expect(differingSamples(mix, samples, after, mix.length)).toBe(0)
    expect(differingSamples(mix, samples, before, after)).toBeGreaterThan(0)
    const stems = await exportTrack(edited, "stems", {}, null)
    const parts = stems.files.map((f) => pcmOf(f.bytes))
    expect(stems.files[stems.files.length - 1]?.stem).toBe("upload")
    for (const p of parts) expect(p.length).toBe(mix.length)
    const own = parts[parts.length - 1] as Int16Array
    expect(differingSamples(own, samples, 0, before)).toBe(0)
    expect(differingSamples(own, samples, after, own.length)).toBe(0)
    expectStemsAddUp(parts, mix)
  })
})

describe("a cover of an upload", () => {
  it("plays the chords heard in it, bar by bar from its first beat, and its tune, the transcription's highest notes", () => {
    const root = upload.upload as UploadRoot
    // Heard: Dm for two bars, then Bb, then A; a tune over a low note sounding with it.
    const bar = 2.5
    const heard: UploadRoot = {
      ...root,
      analysis: {
        ...root.analysis,
        chords: [
          { start: 0.25, end: 0.25 + 2 * bar, chord: "Dm" },
          { start: 0.25 + 2 * bar, end: 0.25 + 3 * bar, chord: "Bb" },
          { start: 0.25 + 3 * bar, end: 10, chord: "A" }
        ]
      },
      transcription: {
        notes: [
          { pitch: 38, start: 0.25, end: 2.7, velocity: 0.8 },
          { pitch: 69, start: 0.26, end: 0.8, velocity: 0.7 },
          { pitch: 62, start: 0.27, end: 0.8, velocity: 0.5 },
          { pitch: 74, start: 0.875, end: 2, velocity: 0.6 },
          { pitch: 72, start: 1.5, end: 2.2, velocity: 0.6 }
        ]
      }
    }
    const source: TrackSource = { ...upload, upload: heard }
    const tracks = { segmentsOf, trackWav }
    const sheet = sheetOf(source, {}, tracks)
    expect(sheet.chords.slice(0, 4)).toEqual(["Dm", "Dm", "Bb", "A"].map(chordNamed))
    // The tune from the first beat, at the sheet's time: the 69 over the 62 and the 38, then 74 cut by 72.
    expect(sheet.lead.map((n) => n.pitch)).toEqual([69, 74, 72])
    const at = sheet.bar / bar
    expect(sheet.lead[0]?.start).toBeCloseTo(0.01 * at, 3)
    expect(sheet.lead[1]?.dur).toBeCloseTo((1.5 - 0.875) * at, 3)

    const cover: TrackSource = {
      request: {
        style: "bossa nova, acoustic guitar",
        title: "Covered",
        lyrics: null,
        instrumental: true,
        model: "aether"
      },
      taskId: "cover-of-upload",
      index: 0,
      derives: { kind: "cover", source }
    }
    const take = sourceTake(cover, {}, tracks)
    expect(take.score.chords?.slice(0, 4)).toEqual(sheet.chords.slice(0, 4))
    const lead = take.score.parts.find((p) => p.role === "lead")
    expect(lead?.notes.map((n) => n.pitch)).toEqual([69, 74, 72])
  })
})

describe("audio_weight on a cover of an upload", { timeout: 120_000 }, () => {
  // A tune heard in three bars from the first beat (0.25 s; bars of 2.5 s at 96 bpm), a note on
  // every beat, each a few milliseconds off it as a transcription is.
  const bar = 2.5
  const beat = bar / 4
  const tune = [69, 67, 65, 64, 62, 64, 65, 67, 69, 70, 69, 67]
  const heard = tune.map((pitch, i) => {
    const start = 0.25 + i * beat + (i % 3 === 0 ? 0.012 : i % 3 === 1 ? -0.008 : 0.004)
    return { pitch, start, end: start + beat * 0.8, velocity: 0.7 }
  })
  const coverAt = (weight: number): TrackSource => ({
    request: {
      style: "bossa nova, acoustic guitar",
      title: "Covered",
      lyrics: null,
      instrumental: true,
      model: "aether",
      audio_weight: weight
    },
    taskId: "cover-weight-of-upload",
    index: 0,
    derives: {
      kind: "cover",
      source: { ...upload, upload: { ...(upload.upload as UploadRoot), transcription: { notes: heard } } }
    }
  })
  const leadOf = async (weight: number): Promise<ReadonlyArray<{ readonly time: number; readonly midi: number }>> => {
    const exported = await exportTrack(coverAt(weight), "midi", {}, null)
    const midi = new Midi(exported.files[0]?.bytes ?? new Uint8Array(0))
    expect(midi.header.tempos[0]?.bpm).toBeCloseTo(96, 1)
    return midi.tracks.find((t) => t.name.startsWith("lead"))?.notes.map((n) => ({ time: n.time, midi: n.midi })) ?? []
  }

  it("1 keeps the transcription's onsets; 0 plays the same notes in the new style's rhythm", async () => {
    const [kept, moved] = await Promise.all([leadOf(1), leadOf(0)])
    // The cover's bar 0 is the upload's first beat.
    const onsets = heard.map((n) => n.start - 0.25)
    expect(kept.map((n) => n.midi)).toEqual(tune)
    for (const [i, n] of kept.entries()) expect(Math.abs(n.time - (onsets[i] ?? 0))).toBeLessThan(0.002)

    expect(moved.map((n) => n.midi)).toEqual(tune)
    // Bossa nova is the engine's jazz: straight sixteenths, but the off-beat eighths 0.6 of a sixteenth late.
    const swung = [0, 1, 2.6, 3].flatMap((s) => [s, s + 4, s + 8, s + 12])
    const sixteenth = bar / 16
    for (const n of moved) {
      const position = (n.time % bar) / sixteenth
      expect(swung.some((g) => Math.abs(position - g) < 0.05)).toBe(true)
    }
    expect(moved.filter((n, i) => Math.abs(n.time - (onsets[i] ?? 0)) > 0.02).length).toBeGreaterThan(tune.length / 2)
  })
})

describe("vocals on an upload", { timeout: 120_000 }, () => {
  it("times every word, in order, on the upload's beat grid (within 60 ms of a sixteenth from its first beat), in its key", async () => {
    const words = "Singing over what you sent\nEvery beat of it"
    const made: TrackSource = {
      request: {
        style: "soul",
        title: "On the grid",
        lyrics: `[Verse]\n${words}`,
        instrumental: false,
        model: "aether"
      },
      taskId: "upload-vocals-grid",
      index: 0,
      derives: { kind: "vocals", source: upload }
    }
    const timed = (await exportTrack(made, "timed_lyrics", {}, null)).timedLyrics ?? []
    expect(timed.map((w) => w.text)).toEqual(words.split(/\s+/))
    // The upload's beats: 0.25 s, then every 0.625 s (96 bpm); a sixteenth is a quarter of that.
    const sixteenth = 0.625 / 4
    for (const w of timed) {
      expect(w.start).toBeGreaterThanOrEqual(0.25 - 0.06)
      expect(w.end).toBeLessThanOrEqual(seconds)
      const steps = (w.start - 0.25) / sixteenth
      expect(Math.abs(steps - Math.round(steps)) * sixteenth).toBeLessThan(0.06)
    }
    // The sung notes (the MIDI export's vocal track) are in D minor, and start where the words do.
    const midi = new Midi((await exportTrack(made, "midi", {}, null)).files[0]?.bytes ?? new Uint8Array(0))
    const sung = midi.tracks.find((t) => t.name === "vocals")?.notes ?? []
    const minor = [0, 2, 3, 5, 7, 8, 10, 11]
    expect(
      sung.filter((n) => minor.includes((((n.midi - 2) % 12) + 12) % 12)).length / sung.length
    ).toBeGreaterThanOrEqual(0.9)
    expect(sung[0]?.time).toBeCloseTo(timed[0]?.start ?? -1, 2)
  })
})

describe("vocals and an accompaniment of an upload", { timeout: 120_000 }, () => {
  /** The least-squares gain of `bed` in `mix`, and what is left of `mix` past it, as a share of its energy. */
  const bedIn = (mix: Int16Array, bed: Int16Array): { readonly gain: number; readonly rest: number } => {
    let dot = 0
    let bedEnergy = 0
    let mixEnergy = 0
    for (let i = 0; i < bed.length; i++) {
      dot += (mix[i] ?? 0) * (bed[i] ?? 0)
      bedEnergy += (bed[i] ?? 0) ** 2
      mixEnergy += (mix[i] ?? 0) ** 2
    }
    const gain = dot / bedEnergy
    let rest = 0
    for (let i = 0; i < bed.length; i++) rest += ((mix[i] ?? 0) - gain * (bed[i] ?? 0)) ** 2
    return { gain, rest: rest / mixEnergy }
  }

  for (const kind of ["vocals", "instrumental"] as const) {
    it(`${kind}: the upload's own audio, as long as it, with the new ${kind === "vocals" ? "voice" : "band"} laid on it`, async () => {
      const made: TrackSource = {
        request: {
          style: kind === "vocals" ? "soul" : "string quartet",
          title: "Layered",
          lyrics: kind === "vocals" ? "[Verse]\nSinging over what you sent\nEvery beat of it" : null,
          instrumental: kind !== "vocals",
          model: "aether"
        },
        taskId: `upload-${kind}`,
        index: 0,
        derives: { kind, source: upload }
      }
      const mix = pcmOf(await trackWav(made, {}, null))
      expect(mix.length).toBe(samples.length)
      const heard = bedIn(mix, samples)
      // The upload is there whole (only scaled down, if the sum would clip), and something else is too.
      expect(heard.gain).toBeGreaterThan(0.5)
      expect(heard.gain).toBeLessThanOrEqual(1.001)
      expect(heard.rest).toBeGreaterThan(0.01)

      // Its stems: the new layer's and the upload itself, at the gain it has in the mix, adding up to the mix.
      const stems = await exportTrack(made, "stems", {}, null)
      const names = stems.files.map((f) => f.stem)
      expect(names[names.length - 1]).toBe("upload")
      expect(stems.files.find((f) => f.stem === "upload")?.name).toBe("upload.wav")
      if (kind === "vocals") expect(names).toEqual(["vocals", "upload"])
      else expect(names).not.toContain("vocals")
      expect(names.length).toBeGreaterThan(1)
      const parts = stems.files.map((f) => pcmOf(f.bytes))
      for (const p of parts) expect(p.length).toBe(mix.length)
      const own = bedIn(parts[parts.length - 1] as Int16Array, samples)
      // The upload's gain in the mix, read exactly: the mix less the new layer's stems is the
      // upload alone (a least-squares fit on the whole mix leans on whatever of the layer
      // correlates with the upload).
      const withoutLayer = mix.map((x, i) => parts.slice(0, -1).reduce((rest, p) => rest - (p[i] ?? 0), x))
      expect(own.gain).toBeCloseTo(bedIn(withoutLayer, samples).gain, 3)
      expect(own.gain).toBeGreaterThan(0.5)
      expect(own.rest).toBeLessThan(1e-6)
      expectStemsAddUp(parts, mix)
    })
  }
})
