/**
 * c2pa-rs, compiled to WebAssembly (`@contentauth/c2pa-wasm`), loaded once per process on first
 * use. Its builder reads the asset it signs through `Blob.slice` and the browser worker's
 * `FileReaderSync`, which Node does not have: bytes at hand are handed to it as a `ByteView`
 * (the two members the binding calls), and a `FileReaderSync` that reads only a `ByteView` is
 * defined on the global object when none is there (docs/decisions/0123-content-credentials.md).
 */
import { readFileSync } from "node:fs"
import { initSync } from "@contentauth/c2pa-wasm"

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

let loaded = false

/** Loads the WebAssembly module (about 9 MB, some 100 ms) the first time it is needed. */
export const loadC2pa = (): void => {
  if (loaded) return
  if (!("FileReaderSync" in globalThis)) {
    Object.defineProperty(globalThis, "FileReaderSync", { value: ByteViewReader, configurable: true, writable: true })
  }
  initSync({ module: readFileSync(new URL(import.meta.resolve("@contentauth/c2pa-wasm/c2pa.wasm"))) })
  loaded = true
}

/** Bytes as the binding's `Blob` parameters take them. */
export const asBlob = (bytes: Uint8Array): Blob => new ByteView(bytes) as unknown as Blob
