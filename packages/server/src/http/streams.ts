/**
 * `{site_url}/files/streams/{task_id}/{index}.mp3?expires=&signature=`: a track's audio while it
 * is made (DESIGN.md section 14, decision 0126). The address is signed by the service (the task's
 * `previews` carry it), so it is the access: unsigned, badly signed, expired, another task's, or
 * a task that never streamed answers 404, as a file not kept does.
 *
 * While the task is pending the answer is chunked MP3 that grows until the track is done:
 * - the built-in engine's take is a file still being written (`file:`): what is written is sent,
 *   then the answer waits on a watch of the take's folder (one per folder, shared by every
 *   listener: an idle listener is a callback in a set, no thread and no polling) and sends the
 *   rest as it comes; the take renamed to its final name (done) or removed (failed) ends it;
 * - the upstream's stream (`http(s):`, its `first` stage) is proxied: the player never meets
 *   the upstream's host; a stream that breaks midway ends the answer cleanly, the task goes on.
 * Once the task is ready the address redirects (302) to the track's final file; once failed, 404.
 */
import { watch } from "node:fs"
import type { FSWatcher } from "node:fs"
import { open } from "node:fs/promises"
import type { FileHandle } from "node:fs/promises"
import type { IncomingMessage, ServerResponse } from "node:http"
import { basename, dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { Generations } from "@lyre/core"
import type { AppRuntime } from "../app.ts"

/** `streams/{task_id}/{index}.mp3`, the key a stream is signed under. */
const streamKey = /^streams\/([A-Za-z0-9_]{1,64})\/(\d{1,2})\.mp3$/

/** A growing file that has not grown for this long is taken as abandoned (its render died with its process). */
const stalledMillis = 5 * 60 * 1000

/** One watch per folder of takes, shared by every listener of its files. */
const watchers = new Map<string, { readonly watcher: FSWatcher; readonly listeners: Set<() => void> }>()

/** Calls `listener` whenever something in `folder` changes; the returned function stops it. */
const onChange = (folder: string, listener: () => void): (() => void) => {
  let entry = watchers.get(folder)
  if (entry === undefined) {
    const listeners = new Set<() => void>()
    const watcher = watch(folder, { persistent: false }, () => {
      for (const l of [...listeners]) l()
    })
    // A folder swept away: wake everyone, each finds its file gone and ends.
    watcher.on("error", () => {
      watchers.delete(folder)
      for (const l of [...listeners]) l()
    })
    entry = { watcher, listeners }
    watchers.set(folder, entry)
  }
  const { watcher, listeners } = entry
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
    if (listeners.size === 0 && watchers.get(folder)?.watcher === watcher) {
      watchers.delete(folder)
      watcher.close()
    }
  }
}

/** Listeners waiting on growing files, for tests and metrics: how many answers are open on them. */
export const growingListeners = (): number => [...watchers.values()].reduce((n, e) => n + e.listeners.size, 0)

const exists = (path: string): Promise<boolean> =>
  open(path, "r").then(
    (h) => h.close().then(() => true),
    () => false
  )

/** Writes `chunk` and waits for the socket to take it (or to close). */
const send = (res: ServerResponse, chunk: Uint8Array): Promise<void> =>
  new Promise((resolve) => {
    if (res.write(chunk)) resolve()
    else {
      const done = () => {
        res.off("drain", done)
        res.off("close", done)
        resolve()
      }
      res.on("drain", done)
      res.on("close", done)
    }
  })

/** Sends a take being written from its start, following it until it is done, gone or the listener leaves. */
const followFile = async (path: string, res: ServerResponse): Promise<void> => {
  const folder = dirname(path)
  const finalPath = path.endsWith(".part") ? path.slice(0, -".part".length) : path
  // The take may have been renamed to its final name between the look-up and here: read that.
  const handle: FileHandle | null = await open(path, "r").catch(() => open(finalPath, "r").catch(() => null))
  if (handle === null) {
    res.end()
    return
  }
  let closed = false
  /** Something changed since the last read: read again before waiting. */
  let changed = false
  let wake: (() => void) | null = null
  const stop = onChange(folder, () => {
    changed = true
    wake?.()
  })
  res.on("close", () => {
    closed = true
    wake?.()
  })
  const buffer = Buffer.allocUnsafe(64 * 1024)
  let position = 0
  let quietSince = Date.now()
  try {
    while (!closed) {
      changed = false
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position)
      if (bytesRead > 0) {
        position += bytesRead
        quietSince = Date.now()
        // A copy: the socket may hold a written chunk after write() returns, and the buffer is read into again.
        await send(res, Buffer.from(buffer.subarray(0, bytesRead)))
        continue
      }
      // At the end of what is written. Done (renamed) or failed (removed): read what is left, end.
      if (!(await exists(path))) {
        const rest = await handle.read(buffer, 0, buffer.length, position)
        if (rest.bytesRead > 0) {
          position += rest.bytesRead
          await send(res, Buffer.from(buffer.subarray(0, rest.bytesRead)))
          continue
        }
        break
      }
      if (Date.now() - quietSince > stalledMillis) break
      if (changed) continue
      // Wait for the folder to change (a piece appended, the take renamed), or a minute at most.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 60_000)
        wake = () => {
          clearTimeout(timer)
          wake = null
          resolve()
        }
      })
    }
  } finally {
    stop()
    await handle.close()
  }
  if (!closed) res.end()
}

/** Proxies the upstream's stream; a break midway ends the answer as if the stream had ended. */
const proxyUpstream = async (url: string, res: ServerResponse): Promise<void> => {
  const abort = new AbortController()
  res.on("close", () => abort.abort())
  try {
    const response = await fetch(url, { signal: abort.signal, redirect: "follow" })
    if (!response.ok || response.body === null) {
      await response.body?.cancel().catch(() => undefined)
      return
    }
    for await (const chunk of response.body) {
      if (abort.signal.aborted) return
      await send(res, chunk as Uint8Array)
    }
  } catch {
    // The upstream's stream broke (or the listener left): what was sent stands, the answer ends.
  } finally {
    if (!res.writableEnded && !res.destroyed) res.end()
  }
}

/**
 * Answers `/files/<key>` when `key` is a stream's (`streams/...`) and the address is signed right;
 * false leaves the request to the 404 (unsigned, another task's, a key of another shape).
 */
export const serveStream = async (
  runtime: AppRuntime,
  req: IncomingMessage,
  res: ServerResponse,
  key: string,
  signed: boolean
): Promise<boolean> => {
  const match = streamKey.exec(key)
  if (match === null || !signed) return false
  const taskId = match[1] as string
  const index = Number(match[2])
  const found = await runtime.runPromise(Generations.use((generations) => generations.streamOf(taskId, index)))
  if (found === null) return false
  if (found.status === "ready") {
    if (found.audioUrl === null) return false
    res.writeHead(302, { location: found.audioUrl, "cache-control": "no-store", "content-length": "0" })
    res.end()
    return true
  }
  const source = found.source
  if (found.status !== "pending" || source === null) return false
  const local = source.startsWith("file:")
  // Only the built-in engine's takes are read from this machine: a growing MP3 it names so.
  if (local && !basename(fileURLToPath(source)).endsWith(".mp3.part")) return false
  if (!local && !/^https?:\/\//i.test(source)) return false
  res.writeHead(200, {
    "content-type": "audio/mpeg",
    "cache-control": "no-store",
    // No length: the track grows until it is done (chunked).
    "x-content-type-options": "nosniff"
  })
  if (req.method === "HEAD") {
    res.end()
    return true
  }
  if (local) await followFile(fileURLToPath(source), res)
  else await proxyUpstream(source, res)
  return true
}
