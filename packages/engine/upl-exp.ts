import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { createEncoder } from "wasm-media-encoders"
import CodecParser from "codec-parser"
const require = createRequire(import.meta.url)
const rate = 44100
const s = new Float32Array(rate * 12); for (let i = 0; i < s.length; i++) s[i] = 0.3 * Math.sin(i / 10)
const lame = readFileSync(require.resolve("wasm-media-encoders").replace(/dist[\\/].*$/, "wasm/mp3.wasm"))
const encoder = await createEncoder("audio/mpeg", lame)
encoder.configure({ sampleRate: rate, channels: 1, bitrate: 128 })
const parts: Uint8Array[] = []
for (let i = 0; i < s.length; i += 11520) parts.push(encoder.encode([s.subarray(i, i + 11520)]).slice())
parts.push(encoder.finalize().slice())
const mp3 = Buffer.concat(parts)
const cut = mp3.subarray(0, Math.floor(mp3.length * 0.7) + 5)
const p = new CodecParser("audio/mpeg", { enableLogging: false })
const it = p.parseChunk(cut); let r; let n = 0; let lastLen = 0
while (!(r = it.next()).done) { n++; lastLen = r.value.data.length }
const f = p.flush(); while (!(r = f.next()).done) { console.log("flush", r.value.data.length, JSON.stringify(r.value.header)) }
console.log(n, lastLen, cut.length)
