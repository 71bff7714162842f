/**
 * Files Vite emits as hashed assets and imports as their URL (`?url`): c2pa-rs's WebAssembly, the
 * package's own `./c2pa.wasm` export, fetched when the Content credentials tool first opens.
 */
declare module "@contentauth/c2pa-wasm/c2pa.wasm?url" {
  const url: string
  export default url
}
