/**
 * c2pa-rs, compiled to WebAssembly (`@contentauth/c2pa-wasm`), loaded once per process or page.
 * Its builder reads the asset it signs through `Blob.slice` and the browser worker's
 * `FileReaderSync`, which Node (and a page's main thread) do not have: bytes at hand are handed
 * to it as a `ByteView` (the two members the binding calls), and a `FileReaderSync` that reads
 * only a `ByteView` is defined on the global object when none is there
 * (docs/decisions/0123-content-credentials.md). Nothing here needs Node, so a page reads
 * manifests with the same code (the dashboard, decision 0130).
 */
import initC2pa from "@contentauth/c2pa-wasm"
import type { InitInput } from "@contentauth/c2pa-wasm"

/** Bytes as the binding reads a Blob: its size and a slice, read back whole. */
class ByteView {
  readonly bytes: Uint8Array
  constructor(bytes: Uint8Array) {
    this.bytes = bytes
  }
  get size(): number {
    return this.bytes.length
  }
  slice(start?: number, end?: number): ByteView {
    return new ByteView(this.bytes.subarray(start ?? 0, end ?? this.bytes.length))
  }
}

class ByteViewReader {
  readAsArrayBuffer(view: unknown): ArrayBuffer {
    if (!(view instanceof ByteView))
      throw new TypeError("Lyre's FileReaderSync reads only bytes handed over as a ByteView")
    const { bytes } = view
    // The binding copies what it reads into WebAssembly's memory at once and keeps nothing, so
    // the view of a whole buffer (a file at hand) is handed over as it is: a copy fewer of it.
    if (bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)
      return bytes.buffer
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  }
}

let loading: Promise<void> | null = null

/**
 * The module in Node: the package's own file, read from disk. `node:fs` is reached only then,
 * through `process`, so a page's bundle has no import of it.
 */
const fromPackage = (): Promise<InitInput> =>
  process
    .getBuiltinModule("node:fs/promises")
    .readFile(new URL(import.meta.resolve("@contentauth/c2pa-wasm/c2pa.wasm")))

/**
 * Loads the WebAssembly module (about 9 MB) once, compiled asynchronously so that the event loop
 * keeps turning meanwhile; a service calls it at start, so no file waits for it. In Node the
 * module is the package's file; a page passes the file its bundler emitted (`() => fetch(url)`)
 * on its first call, and every later call (the readers') shares that load.
 */
export const loadC2pa = (module: () => Promise<InitInput> = fromPackage): Promise<void> => {
  if (loading !== null) return loading
  if (!("FileReaderSync" in globalThis)) {
    Object.defineProperty(globalThis, "FileReaderSync", { value: ByteViewReader, configurable: true, writable: true })
  }
  const load = module()
    .then((source) => initC2pa({ module_or_path: source }))
    .then(() => undefined)
  // A load that failed (a page gone offline) is tried again by the next call.
  load.catch(() => {
    if (loading === load) loading = null
  })
  loading = load
  return load
}

/** Bytes as the binding's `Blob` parameters take them. */
export const asBlob = (bytes: Uint8Array): Blob => new ByteView(bytes) as unknown as Blob
