/**
 * c2pa-rs, compiled to WebAssembly (`@contentauth/c2pa-wasm`), loaded once per process. Its
 * builder reads the asset it signs through `Blob.slice` and the browser worker's
 * `FileReaderSync`, which Node does not have: bytes at hand are handed to it as a `ByteView`
 * (the two members the binding calls), and a `FileReaderSync` that reads only a `ByteView` is
 * defined on the global object when none is there (docs/decisions/0123-content-credentials.md).
 */
import { readFile } from "node:fs/promises"
import initC2pa from "@contentauth/c2pa-wasm"

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
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  }
}

let loading: Promise<void> | null = null

/**
 * Loads the WebAssembly module (about 9 MB) once per process, compiled asynchronously so that
 * the event loop keeps turning meanwhile; a service calls it at start, so no file waits for it.
 */
export const loadC2pa = (): Promise<void> => {
  if (loading !== null) return loading
  if (!("FileReaderSync" in globalThis)) {
    Object.defineProperty(globalThis, "FileReaderSync", { value: ByteViewReader, configurable: true, writable: true })
  }
  loading = readFile(new URL(import.meta.resolve("@contentauth/c2pa-wasm/c2pa.wasm")))
    .then((module) => initC2pa({ module_or_path: module }))
    .then(() => undefined)
  return loading
}

/** Bytes as the binding's `Blob` parameters take them. */
export const asBlob = (bytes: Uint8Array): Blob => new ByteView(bytes) as unknown as Blob
