/**
 * `lyre verify FILE` in this process: a signed WAV prints its manifest chain and exits 0; the
 * same file with one audio byte changed, or a file without a manifest, exits 1 with the reason.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadSigningCredentials, makeLocalCredentials, signAsset } from "@lyre/provenance"
import { afterAll, describe, expect, it } from "vitest"
import { pcmWav } from "../../../provenance/test/support/audio.ts"
import { run } from "../../src/program.ts"
import type { Io } from "../../src/program.ts"

const directory = mkdtempSync(join(tmpdir(), "lyre-verify-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const wav = (samples: number): Uint8Array => pcmWav(samples, { sample: (i) => (i * 53) % 4000 })

const lyre = async (...args: Array<string>) => {
  let stdout = ""
  let stderr = ""
  const io = {
    env: {},
    stdout: {
      write: (chunk: string) => {
        stdout += chunk
        return true
      },
      isTTY: false
    },
    stderr: {
      write: (chunk: string) => {
        stderr += chunk
        return true
      },
      isTTY: false
    },
    stdin: process.stdin
  } as unknown as Io
  const code = await run(["node", "lyre", ...args], io)
  return { code, stdout, stderr }
}

describe("lyre verify", () => {
  it("prints the chain of a signed file and exits 0; a changed or unsigned one exits 1", async () => {
    const local = await makeLocalCredentials()
    const signer = await loadSigningCredentials(local.chainPem, local.keyPem)
    const signed = await signAsset(
      {
        title: "Glass City",
        format: "audio/wav",
        claimGenerator: { name: "Lyre", version: "1.0.0" },
        actions: [{ action: "c2pa.created", digitalSourceType: "algorithmicMedia", softwareAgent: { name: "engine" } }]
      },
      wav(1000),
      signer
    )
    const file = join(directory, "song.wav")
    writeFileSync(file, signed)
    const ok = await lyre("verify", file)
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain(`${file}: Valid`)
    expect(ok.stdout).toMatch(/made with {2}Lyre 1\.0\.0/)
    expect(ok.stdout).toMatch(/action {5}c2pa\.created \(engine, algorithmicMedia\)/)
    expect(ok.stdout).toContain("signingCredential.untrusted")

    const trusted = join(directory, "ca.pem")
    writeFileSync(trusted, local.caPem)
    expect((await lyre("verify", file, "--trust", trusted, "--output", "json")).stdout).toContain('"state": "Trusted"')

    const changed = Buffer.from(signed)
    changed[changed.length - 3] = (changed[changed.length - 3] ?? 0) ^ 1
    writeFileSync(join(directory, "changed.wav"), changed)
    const bad = await lyre("verify", join(directory, "changed.wav"))
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining("content credentials are invalid")])

    writeFileSync(join(directory, "plain.wav"), wav(100))
    const plain = await lyre("verify", join(directory, "plain.wav"))
    expect([plain.code, plain.stderr]).toEqual([1, expect.stringContaining("carries no content credentials")])
  })
})
