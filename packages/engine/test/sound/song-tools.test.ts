// Song tools on the built-in engine, measured on what they give out with libraries we did not
// write: WAVs read back with wavefile, MP3s decoded with mpg123, MIDI parsed with @tonejs/midi
// (and midi-file for the lyric events, which @tonejs/midi reads only from the first track).

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Midi } from "@tonejs/midi"
import { parseMidi } from "midi-file"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  exportTrack,
  makeEngine,
  renderExtension,
  type EngineExport,
  type EngineRequest,
  type EngineTrack,
  type RenderOptions,
  type TrackSource
} from "../../src/index.ts"
import { runJob } from "../../src/jobs.ts"
import { writeMidi } from "../../src/midi.ts"
import { timedLyrics, trackMidi } from "../../src/song.ts"
import { decodeMp3, mono } from "../support/analysis.ts"
import { readPcm16 } from "../support/wav.ts"

const LYRICS =
  "[Verse]\nNeon lights are calling me tonight\nRunning through the city burning bright\n[Chorus]\nHold on, hold on to the night\nNever let it go tonight"
const request: EngineRequest = {
  style: "synthwave, 110 bpm, in A minor, synth, drums",
  title: "Neon Nights",
  lyrics: LYRICS,
  instrumental: false,
  model: "aether",
  vocal_gender: "f"
}

const cacheDir = mkdtempSync(join(tmpdir(), "lyre-engine-test-"))
const cache = { dir: cacheDir, maxBytes: 1024 ** 3 }
// Full-length renders where the property depends on the whole song (the WAV's length, the MIDI's
// last note, the timed words); songs cut at 15 s where it does not (stems, extensions), for time.
// One thread each: the tests read what a pool gives out, not how fast, and every worker started
// costs about a second of CPU (its modules, the SoundFont).
const SHORT: RenderOptions = { maxSeconds: 15 }
const engine = makeEngine({ threads: 1, pcmCache: cache })
const short = makeEngine({ threads: 1, pcmCache: cache, render: SHORT })
afterAll(async () => {
  await Promise.all([engine.close(), short.close()])
  rmSync(cacheDir, { recursive: true, force: true })
})
/**
 * A WAV export where nothing is cached, as in another process: the export job a worker runs, here
 * on this thread with no cache, rendering what it is asked for from the TrackSource alone.
 */
const uncachedWav = (s: TrackSource): Promise<EngineExport> => exportTrack(s, "wav", SHORT, null)

let fullTake: EngineTrack | undefined
let shortTake: EngineTrack | undefined
const source: TrackSource = { request, taskId: "song-tools-1", index: 0 }

/**
 * Take 0 of the source, made by the job a worker runs for each take of a task (so its PCM is in
 * the cache as after `engine.render`); the tests read no other take, so take 1 is not rendered.
 */
const renderTake = async (options: RenderOptions): Promise<EngineTrack> => {
  const result = await runJob({ kind: "render", request, taskId: source.taskId, index: 0, id: 0, options, cache })
  if (result.kind !== "track") throw new Error("a render job answered with something else")
  return result.track
}
beforeAll(async () => {
  fullTake = await renderTake({})
  shortTake = await renderTake(SHORT)
}, 120_000)
const track = (): EngineTrack => fullTake as EngineTrack
const shortTrack = (): EngineTrack => shortTake as EngineTrack

/** Take 0 of an extension, made by the job a worker runs for it (its PCM left in the cache). */
const extendTake = (extSource: TrackSource): Promise<EngineTrack> => renderExtension(extSource, SHORT, cache)

interface Wav {
  readonly channels: number
  readonly sampleRate: number
  readonly bits: number
  readonly format: number
  readonly left: Float64Array
  readonly right: Float64Array
}
function readWav(bytes: Uint8Array): Wav {
  const w = readPcm16(bytes)
  if (w.channels !== 2) throw new Error(`not stereo: ${w.channels} channels`)
  const left = new Float64Array(w.samples.length >> 1)
  const right = new Float64Array(w.samples.length >> 1)
  // Scaled to -1..1 as a decoder would.
  for (let i = 0; i < left.length; i++) {
    left[i] = (w.samples[2 * i] as number) / 32768
    right[i] = (w.samples[2 * i + 1] as number) / 32768
  }
  return { channels: w.channels, sampleRate: w.sampleRate, bits: w.bits, format: w.format, left, right }
}

function fileOf(e: EngineExport, name: string): Uint8Array {
  const f = e.files.find((x) => x.name === name)
  if (f === undefined) throw new Error(`no ${name} in ${e.files.map((x) => x.name).join(", ")}`)
  return f.bytes
}

function correlation(x: ArrayLike<number>, y: ArrayLike<number>, lag: number, from: number, to: number): number {
  let xy = 0,
    xx = 0,
    yy = 0
  for (let i = from; i < to; i++) {
    const a = x[i] as number
    const b = (y[i + lag] ?? 0) as number
    xy += a * b
    xx += a * a
    yy += b * b
  }
  return xy / Math.sqrt(xx * yy || 1)
}

/** The decoder's delay against the PCM (LAME's priming plus mpg123's), found by cross-correlation. */
function encoderDelay(pcm: ArrayLike<number>, decoded: ArrayLike<number>, around: number): number {
  let best = 0
  let bestLag = 0
  for (let lag = 0; lag <= 3000; lag++) {
    const c = correlation(pcm, decoded, lag, around, around + 44100)
    if (c > best) {
      best = c
      bestLag = lag
    }
  }
  return bestLag
}

const monoOf = (w: Wav): Float64Array => w.left.map((x, i) => 0.5 * (x + (w.right[i] as number)))

describe("song tools on the built-in engine", { timeout: 180_000 }, () => {
  it("wav: RIFF PCM 16-bit 44.1 kHz stereo, the whole track, the PCM its MP3 was encoded from", async () => {
    const wav = await engine.export(source, "wav")
    expect(wav.timedLyrics).toBeNull()
    expect(wav.files.map((f) => [f.name, f.contentType, f.stem])).toEqual([["track.wav", "audio/wav", null]])
    const bytes = fileOf(wav, "track.wav")
    expect(Buffer.from(bytes.subarray(0, 4)).toString("latin1")).toBe("RIFF")
    const w = readWav(bytes)
    expect([w.format, w.channels, w.sampleRate, w.bits]).toEqual([1, 2, 44100, 16])
    expect(Math.abs(w.left.length / 44100 - track().duration)).toBeLessThan(0.001)

    const decoded = mono(await decodeMp3(track().mp3))
    const pcm = monoOf(w)
    const lag = encoderDelay(pcm, decoded, 20 * 44100)
    const r = correlation(pcm, decoded, lag, 0, pcm.length - lag)
    expect(r).toBeGreaterThan(0.99)

    // A cache miss (here: the export job with no cache) renders the same samples from the
    // TrackSource alone. Checked on the song cut at 15 s: a miss renders the take as the first render did
    // whatever its length, and the whole song again would cost a full render more.
    const [again, cached] = await Promise.all([uncachedWav(source), short.export(source, "wav")])
    expect(Buffer.from(fileOf(again, "track.wav")).equals(Buffer.from(fileOf(cached, "track.wav")))).toBe(true)
  })

  it("stems: one WAV per part, each the track's length, adding up to the mix", async () => {
    const [stems, wav] = await Promise.all([short.export(source, "stems"), short.export(source, "wav")])
    expect(stems.timedLyrics).toBeNull()
    expect(stems.files.map((f) => f.stem)).toEqual(["vocals", "drums", "bass", "harmony", "lead"])
    for (const f of stems.files) {
      expect(f.name).toBe(`${f.stem}.wav`)
      expect(f.contentType).toBe("audio/wav")
    }
    const mix = readWav(fileOf(wav, "track.wav"))
    const parts = stems.files.map((f) => readWav(f.bytes))
    for (const p of parts) {
      expect([p.format, p.channels, p.sampleRate, p.bits]).toEqual([1, 2, 44100, 16])
      expect(p.left.length).toBe(mix.left.length)
    }
    let signal = 0
    let residual = 0
    for (const ch of ["left", "right"] as const) {
      for (let i = 0; i < mix[ch].length; i++) {
        let sum = 0
        for (const p of parts) sum += p[ch][i] as number
        const m = mix[ch][i] as number
        signal += m * m
        residual += (sum - m) ** 2
      }
    }
    const db = 10 * Math.log10(residual / signal)
    // The bar is 20 dB below the mix; only 16-bit rounding of six files is left.
    expect(db).toBeLessThan(-60)
    // Every stem carries its own part: none is silent.
    for (const p of parts) expect(p.left.some((x) => Math.abs(x) > 0.01)).toBe(true)
  })

  it("stems: the sidechain pump and the lo-fi crackle are mixed into them as into the track", async () => {
    for (const [style, names] of [
      ["house, 124 bpm, synth, drums, bass", ["drums", "bass", "harmony"]],
      ["lofi hip hop, chill, piano, drums", ["drums", "harmony", "vinyl"]]
    ] as const) {
      const instrumental: TrackSource = {
        request: { ...request, style, lyrics: null, instrumental: true },
        taskId: "stems-fx",
        index: 0
      }
      const [stems, wav] = await Promise.all([short.export(instrumental, "stems"), short.export(instrumental, "wav")])
      expect(stems.files.map((f) => f.stem)).toEqual(expect.arrayContaining([...names]))
      const mix = readWav(fileOf(wav, "track.wav"))
      const parts = stems.files.map((f) => readWav(f.bytes))
      let signal = 0
      let residual = 0
      for (let i = 0; i < mix.right.length; i++) {
        let sum = 0
        for (const p of parts) sum += p.right[i] as number
        signal += (mix.right[i] as number) ** 2
        residual += (sum - (mix.right[i] as number)) ** 2
      }
      expect(10 * Math.log10(residual / signal)).toBeLessThan(-60)
    }
  })

  it("midi: format 1 with tempo, key signature, one track per part with its program, drums on channel 10, sung syllables as lyrics", async () => {
    const out = await engine.export(source, "midi")
    expect(out.files.map((f) => [f.name, f.contentType, f.stem])).toEqual([["track.mid", "audio/midi", null]])
    const bytes = fileOf(out, "track.mid")
    const midi = new Midi(bytes)
    expect(midi.header.tempos.map((t) => Math.round(t.bpm * 1000) / 1000)).toEqual([110])
    // @tonejs/midi names a key signature by its major key: A minor is written as "no sharps, minor".
    expect(midi.header.keySignatures.map((k) => [k.key, k.scale])).toEqual([["C", "minor"]])
    const names = midi.tracks.map((t) => t.name)
    expect(names).toContain("vocals")
    expect(names).toContain("drums")
    const drums = midi.tracks.find((t) => t.name === "drums")
    expect(drums?.channel).toBe(9)
    expect(drums?.instrument.percussion).toBe(true)
    const bass = midi.tracks.find((t) => t.name.startsWith("bass"))
    expect(bass?.instrument.family).toBe("bass")
    for (const t of midi.tracks.filter((x) => x.notes.length > 0 && x.name !== "drums")) expect(t.channel).not.toBe(9)
    const lastEnd = Math.max(...midi.tracks.flatMap((t) => t.notes.map((n) => n.time + n.duration)))
    expect(Math.abs(lastEnd - track().duration)).toBeLessThan(2)

    const raw = parseMidi(bytes)
    expect(raw.header.format).toBe(1)
    const vocals = raw.tracks.find((t) => t.some((e) => e.type === "trackName" && e.text === "vocals")) ?? []
    const sung = vocals
      .filter((e) => e.type === "lyrics")
      .map((e) => (e.type === "lyrics" ? e.text : ""))
      .join("")
    expect(sung.startsWith("Neon lights are calling me tonight Running")).toBe(true)
    expect(sung).toContain("Hold on hold on to the night")
  })

  it("timed_lyrics: every sung word, in order, inside the track, from the voice's schedule", async () => {
    const out = await engine.export(source, "timed_lyrics")
    expect(out.files).toEqual([])
    const words = out.timedLyrics ?? []
    const lines = LYRICS.split("\n").filter((l) => !l.startsWith("["))
    const written = lines.join(" ").split(/\s+/)
    const chorus = lines.slice(2).join(" ").split(/\s+/)
    // The lyrics as written, then the chorus again as many times as the form repeats it.
    const sung = words.map((w) => w.text)
    expect(sung.slice(0, written.length)).toEqual(written)
    const repeats = (sung.length - written.length) / chorus.length
    expect(Number.isInteger(repeats)).toBe(true)
    expect(sung.slice(written.length)).toEqual(Array.from({ length: repeats }, () => chorus).flat())
    let previous = 0
    for (const w of words) {
      expect(w.start).toBeGreaterThanOrEqual(previous)
      expect(w.end).toBeGreaterThan(w.start)
      expect(w.end).toBeLessThanOrEqual(track().duration)
      previous = w.start
    }
    // An instrumental has none: an empty list, not a failure.
    expect(
      timedLyrics({ request: { ...request, instrumental: true, lyrics: null }, taskId: "inst", index: 0 }, {})
    ).toEqual([])
  })

  it("reports a bad source or format as a rejection and keeps serving", async () => {
    const bad: TrackSource = {
      request: { ...request, model: "bogus" } as unknown as EngineRequest,
      taskId: "bad",
      index: 0
    }
    await expect(engine.export(bad, "midi")).rejects.toThrow(/unknown model/)
    await expect(engine.export(source, "flac" as unknown as "wav")).rejects.toThrow(/unknown export format: flac/)
    await expect(engine.extend(bad, 5, request, "bad-ext")).rejects.toThrow(/unknown model/)
    await expect(
      engine.export({ request, taskId: "nan", index: 0, extends: { source, continueAt: Number.NaN } }, "timed_lyrics")
    ).rejects.toThrow(/continueAt/)
    expect((await engine.export(source, "timed_lyrics")).timedLyrics?.length).toBeGreaterThan(0)
  })

  it("light exports go ahead of the renders waiting in the pool", async () => {
    const one = makeEngine({ threads: 1, pcmCache: null, render: { maxSeconds: 4 } })
    try {
      const order: string[] = []
      // One worker: take 0 starts, take 1 waits; the MIDI export and the timed lyrics go before take 1.
      const render = one.render(request, "queue-order").then(() => {
        order.push("render")
      })
      const midi = one.export(source, "midi").then(() => {
        order.push("midi")
      })
      const words = one.export(source, "timed_lyrics").then(() => {
        order.push("timed_lyrics")
      })
      await Promise.all([render, midi, words])
      expect(order).toEqual(["midi", "timed_lyrics", "render"])
    } finally {
      await one.close()
    }
  })

  it("the same TrackSource gives the same bytes", async () => {
    const a = await short.export(source, "stems")
    const b = await short.export(source, "stems")
    expect(
      a.files.map((f) => Buffer.from(f.bytes).equals(Buffer.from(b.files.find((x) => x.name === f.name)?.bytes ?? [])))
    ).toEqual(a.files.map(() => true))
    const m1 = await engine.export(source, "midi")
    const m2 = await engine.export(source, "midi")
    expect(Buffer.from(fileOf(m1, "track.mid")).equals(Buffer.from(fileOf(m2, "track.mid")))).toBe(true)
  })

  it("extend: the source up to continue_at, then at least 20 s more, in the same tempo and key, singing the new lyrics", async () => {
    const continueAt = 10.5
    const newLyrics = "[Verse]\nMorning breaks across the empty street\n[Chorus]\nHold on to the light"
    const extRequest: EngineRequest = { ...request, lyrics: newLyrics, title: "Neon Mornings" }
    const ext = await short.extend(source, continueAt, extRequest, "song-tools-ext")
    expect(ext.map((t) => t.index)).toEqual([0, 1])
    const original = readWav(fileOf(await short.export(source, "wav"), "track.wav"))
    const cut = Math.round(continueAt * 44100)
    for (const t of ext) {
      expect(t.title).toBe("Neon Mornings")
      // The same instrumentation and voice as the source.
      expect(t.tags).toBe(shortTrack().tags)
      expect(t.duration).toBeGreaterThan(continueAt + 20)
      const extSource: TrackSource = {
        request: extRequest,
        taskId: "song-tools-ext",
        index: t.index,
        extends: { source, continueAt }
      }
      const wav = readWav(fileOf(await short.export(extSource, "wav"), "track.wav"))
      expect(Math.abs(wav.left.length / 44100 - t.duration)).toBeLessThan(0.001)
      // Sample for sample, the source's WAV up to continue_at...
      let same = true
      for (let i = 0; i < cut && same; i++)
        same = wav.left[i] === original.left[i] && wav.right[i] === original.right[i]
      expect(same).toBe(true)
      // ...and, decoded, the extension's MP3 carries the source's first seconds.
      const decoded = mono(await decodeMp3(t.mp3))
      const src = monoOf(original)
      const lag = encoderDelay(src, decoded, 4 * 44100)
      expect(correlation(src, decoded, lag, 0, cut - lag)).toBeGreaterThan(0.99)
      // The new words are sung after continue_at, the source's before it.
      const words = timedLyrics(extSource, { maxSeconds: 15 })
      const after = words.filter((w) => w.start >= continueAt).map((w) => w.text)
      expect(after.slice(0, 6)).toEqual(["Morning", "breaks", "across", "the", "empty", "street"])
      expect(
        words
          .filter((w) => w.start < continueAt)
          .map((w) => w.text)
          .slice(0, 2)
      ).toEqual(["Neon", "lights"])
      // The same tempo and key, read back from its MIDI.
      const midi = new Midi(fileOf(await short.export(extSource, "midi"), "track.mid"))
      expect(midi.header.tempos[0]?.bpm).toBeCloseTo(110, 3)
      expect(midi.header.keySignatures.map((k) => [k.key, k.scale])).toEqual([["C", "minor"]])
    }
    // Two takes, two different continuations.
    expect(Buffer.from(ext[0]?.mp3 ?? []).equals(Buffer.from(ext[1]?.mp3 ?? []))).toBe(false)
    // Deterministic: the same extension again (its take 0, the one compared) gives the same MP3...
    const extSource: TrackSource = {
      request: extRequest,
      taskId: "song-tools-ext",
      index: 0,
      extends: { source, continueAt }
    }
    // ...and so does a process with nothing cached, rendering the source and its continuation again:
    // one render answers both, made by the extension's job with an empty cache of its own, which
    // it leaves holding only what it rendered (the source's PCM and the extension's).
    const empty = { dir: mkdtempSync(join(tmpdir(), "lyre-engine-test-empty-")), maxBytes: 1024 ** 3 }
    try {
      const again = await renderExtension(extSource, SHORT, empty)
      expect(Buffer.from(again.mp3).equals(Buffer.from(ext[0]?.mp3 ?? []))).toBe(true)
      const [fresh, cached] = await Promise.all([
        exportTrack(extSource, "wav", SHORT, empty),
        short.export(extSource, "wav")
      ])
      expect(Buffer.from(fileOf(fresh, "track.wav")).equals(Buffer.from(fileOf(cached, "track.wav")))).toBe(true)
    } finally {
      rmSync(empty.dir, { recursive: true, force: true })
    }
  })

  it("extend without new lyrics sings the chorus again and ends; its stems add up to it", async () => {
    const end = shortTrack().duration
    // Take 0 alone: what `short.extend(source, end, request, "song-tools-ext-2")` gives first.
    const extSource: TrackSource = {
      request,
      taskId: "song-tools-ext-2",
      index: 0,
      extends: { source, continueAt: end }
    }
    const t = await extendTake(extSource)
    expect(t.duration).toBeGreaterThan(end + 20)
    const after = timedLyrics(extSource, { maxSeconds: 15 })
      .filter((w) => w.start >= end)
      .map((w) => w.text)
    expect(after.slice(0, 5)).toEqual(["Hold", "on,", "hold", "on", "to"])
    const [stems, wav] = await Promise.all([short.export(extSource, "stems"), short.export(extSource, "wav")])
    const mix = readWav(fileOf(wav, "track.wav"))
    const parts = stems.files.map((f) => readWav(f.bytes))
    let signal = 0
    let residual = 0
    for (let i = 0; i < mix.left.length; i++) {
      let sum = 0
      for (const p of parts) sum += p.left[i] as number
      signal += (mix.left[i] as number) ** 2
      residual += (sum - (mix.left[i] as number)) ** 2
    }
    expect(10 * Math.log10(residual / signal)).toBeLessThan(-60)
  })
})

describe("a chain of extensions", () => {
  it("reads as one song: the words of each part in order, one MIDI file with the same tempo throughout", () => {
    const first: TrackSource = { request, taskId: "chain-1", index: 1 }
    const second: TrackSource = {
      request: { ...request, lyrics: "[Verse]\nSecond part begins right here" },
      taskId: "chain-2",
      index: 0,
      extends: { source: first, continueAt: 30 }
    }
    const third: TrackSource = {
      request: { ...request, lyrics: "[Chorus]\nThird part sings the end" },
      taskId: "chain-3",
      index: 1,
      extends: { source: second, continueAt: 55 }
    }
    const words = timedLyrics(third, {})
    const texts = words.map((w) => w.text)
    expect(texts.indexOf("Second")).toBeGreaterThan(0)
    expect(texts.indexOf("Third")).toBeGreaterThan(texts.indexOf("Second"))
    // The new chorus, sung as many times as the continuation needs to run its 20-odd seconds.
    const tail = texts.slice(texts.indexOf("Third"))
    expect(tail.length % 5).toBe(0)
    expect(tail).toEqual(Array.from({ length: tail.length / 5 }, () => ["Third", "part", "sings", "the", "end"]).flat())
    for (let i = 1; i < words.length; i++) expect(words[i]?.start ?? 0).toBeGreaterThanOrEqual(words[i - 1]?.start ?? 0)
    expect(words.find((w) => w.text === "Second")?.start).toBeGreaterThanOrEqual(30)
    expect(words.find((w) => w.text === "Third")?.start).toBeGreaterThanOrEqual(55)
    expect(words.filter((w) => w.start < 30).every((w) => w.end <= 30)).toBe(true)
    const midi = new Midi(trackMidi(third, {}))
    expect(midi.header.tempos.map((t) => Math.round(t.bpm))).toEqual([110])
    const notes = midi.tracks.flatMap((t) => t.notes)
    expect(
      notes.some((n) => n.time < 30) && notes.some((n) => n.time > 30 && n.time < 55) && notes.some((n) => n.time > 60)
    ).toBe(true)
  })
})

describe("@lyre/engine/midi", () => {
  it("writes a generic note list as a Standard MIDI File a parser reads back", () => {
    const bytes = writeMidi({
      bpm: 96,
      key: "F# major",
      title: "Generic",
      tracks: [
        {
          name: "lead",
          program: 81,
          channel: 0,
          notes: [
            { pitch: 66, start: 0, end: 0.5, velocity: 100 },
            { pitch: 70, start: 0.625, end: 1.25, velocity: 90 }
          ],
          lyrics: [
            { text: "héllo ", time: 0 },
            { text: "world", time: 0.625 }
          ]
        },
        { name: "drums", program: 0, channel: 9, notes: [{ pitch: 36, start: 0, end: 0.1, velocity: 120 }] }
      ]
    })
    const midi = new Midi(bytes)
    expect(midi.header.tempos[0]?.bpm).toBeCloseTo(96, 6)
    expect(midi.header.keySignatures.map((k) => [k.key, k.scale])).toEqual([["F#", "major"]])
    expect(midi.header.name).toBe("Generic")
    const lead = midi.tracks.find((t) => t.name === "lead")
    expect(lead?.instrument.number).toBe(81)
    expect(
      lead?.notes.map((n) => [n.midi, n.time, Math.round(n.duration * 1000) / 1000, Math.round(n.velocity * 127)])
    ).toEqual([
      [66, 0, 0.5, 100],
      [70, 0.625, 0.625, 90]
    ])
    expect(midi.tracks.find((t) => t.name === "drums")?.instrument.percussion).toBe(true)
    const raw = parseMidi(bytes)
    const lyrics = raw.tracks
      .flat()
      .filter((e) => e.type === "lyrics")
      .map((e) => (e.type === "lyrics" ? Buffer.from(e.text, "latin1").toString("utf8") : ""))
    expect(lyrics).toEqual(["héllo ", "world"])
  })

  it("refuses a tempo that is not a positive number and leaves out a key it cannot read", () => {
    expect(() => writeMidi({ bpm: 0, tracks: [] })).toThrow(/bpm/)
    expect(new Midi(writeMidi({ bpm: 120, key: "lydian-ish", tracks: [] })).header.keySignatures).toEqual([])
  })
})
