// The engine's PCM cache: every take it renders leaves its 16-bit PCM (as the WAV file the `wav`
// export gives out) in a directory it owns, keyed by a hash of the TrackSource and the render
// options. A `wav` export is then a file read, and an extension starts from its source's PCM
// without synthesizing it again. The cache is only an accelerator: a miss (another machine,
// an evicted file) renders the same samples again from the TrackSource.

import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { mkdir, readdir, rename, stat, unlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import type { RenderOptions, TrackSource } from "./types.ts"

export interface PcmCacheOptions {
  readonly dir: string
  /** Oldest files are removed past this many bytes. */
  readonly maxBytes: number
}

function canonical(source: TrackSource): unknown {
  const r = source.request
  return {
    request: [
      r.style,
      r.title,
      r.lyrics,
      r.instrumental,
      r.model,
      r.vocal_gender ?? null,
      r.negative_tags ?? null,
      r.style_weight ?? null,
      r.weirdness_constraint ?? null,
      r.audio_weight ?? null
    ],
    taskId: source.taskId,
    index: source.index,
    extends:
      source.extends === undefined
        ? null
        : { source: canonical(source.extends.source), continueAt: source.extends.continueAt },
    // Only when present, so that the keys of plain takes and extensions stay what they were.
    ...(source.derives === undefined
      ? {}
      : { derives: { ...source.derives, source: canonical(source.derives.source) } }),
    ...(source.persona === undefined ? {} : { persona: canonical(source.persona) })
  }
}

export function cacheKey(source: TrackSource, options: RenderOptions): string {
  const text = JSON.stringify([canonical(source), options.maxSeconds ?? null, options.muteVoice ?? false])
  return createHash("sha256").update(text).digest("hex").slice(0, 40)
}

export function readCached(cache: PcmCacheOptions | null, key: string): Uint8Array | null {
  if (cache === null) return null
  try {
    return new Uint8Array(readFileSync(join(cache.dir, `${key}.wav`)))
  } catch {
    return null
  }
}

/**
 * Leaves a take's WAV in the cache. Asynchronous so that the disk write (about a third of a second
 * for a 2-minute take) overlaps the MP3 encoding; it never rejects.
 */
export async function writeCached(cache: PcmCacheOptions | null, key: string, wav: Uint8Array): Promise<void> {
  if (cache === null) return
  try {
    await mkdir(cache.dir, { recursive: true })
    const file = join(cache.dir, `${key}.wav`)
    // Written aside and renamed: a reader never sees half a file.
    const tmp = `${file}.${process.pid}.${Math.floor(performance.now() * 1000)}.tmp`
    await writeFile(tmp, wav)
    await rename(tmp, file)
    await evict(cache)
  } catch {
    // A cache that cannot be written only costs speed: the next export renders again.
  }
}

async function evict(cache: PcmCacheOptions): Promise<void> {
  const names = (await readdir(cache.dir)).filter((f) => f.endsWith(".wav"))
  const files = await Promise.all(
    names.map(async (f) => {
      const st = await stat(join(cache.dir, f))
      return { f, bytes: st.size, at: st.mtimeMs }
    })
  )
  let total = files.reduce((a, x) => a + x.bytes, 0)
  if (total <= cache.maxBytes) return
  files.sort((a, b) => a.at - b.at)
  for (const x of files) {
    if (total <= cache.maxBytes) break
    try {
      await unlink(join(cache.dir, x.f))
      total -= x.bytes
    } catch {
      // Another process removed it first.
    }
  }
}
