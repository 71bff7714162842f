/**
 * Signing and reading with c2pa-rs (WebAssembly): a signed MP3 and WAV read back Valid (Trusted
 * under the local CA), a changed audio byte reads Invalid, an edit names its ingredient's
 * manifest, and credentials outside C2PA's certificate profile are refused before any signing.
 */
import { beforeAll, describe, expect, it } from "vitest"
import {
  discloseInMp3,
  discloseInWav,
  loadSigningCredentials,
  makeLocalCredentials,
  readAsset,
  readSidecar,
  signAsset,
  signSidecar
} from "../../src/index.ts"
import type { LocalCredentials, ManifestDefinition, SigningCredentials } from "../../src/index.ts"
import { pcmWav, silentMp3 } from "../support/audio.ts"

const mp3 = silentMp3
/** A 16-bit mono WAV of `samples` samples of a ramp. */
const wav = (samples: number): Uint8Array => pcmWav(samples, { rate: 44_100, sample: (i) => (i % 200) * 100 })

const created = (format: string): ManifestDefinition => ({
  title: "song",
  format,
  claimGenerator: { name: "Lyre", version: "1.2.3" },
  actions: [
    {
      action: "c2pa.created",
      digitalSourceType: "algorithmicMedia",
      softwareAgent: { name: "Lyre built-in engine" },
      when: "2026-08-02T09:30:00.000Z"
    }
  ]
})

const disclosure = {
  text: "Made with AI by Lyre",
  software: "Lyre 1.2.3",
  digitalSourceType: "http://cv.iptc.org/newscodes/digitalsourcetype/algorithmicMedia"
}

let local: LocalCredentials
let signer: SigningCredentials

beforeAll(async () => {
  local = await makeLocalCredentials()
  signer = await loadSigningCredentials(local.chainPem, local.keyPem)
})

describe("signAsset and readAsset", () => {
  it("signs an MP3 that reads Valid, Trusted under the local CA, and Invalid with one audio byte changed", async () => {
    const signed = await signAsset(created("audio/mpeg"), discloseInMp3(mp3(20), disclosure), signer)
    const report = await readAsset(signed, "audio/mpeg")
    expect(report.state).toBe("Valid")
    expect(report.failures.map((failure) => failure.code)).toEqual(["signingCredential.untrusted"])
    const [manifest] = report.manifests
    expect(manifest?.claimGenerator).toBe("Lyre 1.2.3")
    expect(manifest?.actions[0]).toMatchObject({
      action: "c2pa.created",
      digitalSourceType: disclosure.digitalSourceType,
      softwareAgent: "Lyre built-in engine",
      when: "2026-08-02T09:30:00.000Z"
    })
    expect((await readAsset(signed, "audio/mpeg", { trustAnchors: local.caPem })).state).toBe("Trusted")
    const changed = new Uint8Array(signed)
    changed[changed.length - 10] = (changed[changed.length - 10] ?? 0) ^ 1
    const tampered = await readAsset(changed, "audio/mpeg")
    expect(tampered.state).toBe("Invalid")
    expect(tampered.failures.map((failure) => failure.code)).toContain("assertion.dataHash.mismatch")
  })

  it("signs a WAV with its LIST INFO disclosure, and an edit of it names the source's manifest", async () => {
    const source = await signAsset(created("audio/wav"), discloseInWav(wav(2000), disclosure), signer)
    expect(Buffer.from(source).includes("Made with AI by Lyre")).toBe(true)
    const edit = await signAsset(
      {
        title: "edit",
        format: "audio/wav",
        claimGenerator: { name: "Lyre", version: "1.2.3" },
        actions: [
          { action: "c2pa.opened", ingredientIds: ["source"] },
          { action: "c2pa.edited", digitalSourceType: "algorithmicMedia", description: "a section composed again" }
        ],
        ingredients: [{ id: "source", title: "song", format: "audio/wav", relationship: "parentOf", bytes: source }]
      },
      wav(3000),
      signer
    )
    const report = await readAsset(edit, "audio/wav")
    expect(report.state).toBe("Valid")
    expect(report.manifests.map((manifest) => manifest.title)).toEqual(["edit", "song"])
    expect(report.manifests[0]?.ingredients[0]).toMatchObject({ title: "song", relationship: "parentOf" })
    expect(report.manifests[0]?.actions.map((action) => action.action)).toEqual(["c2pa.opened", "c2pa.edited"])
  })

  it("names an ingredient c2pa-rs cannot open (an OGG upload) without its bytes", async () => {
    const edit = await signAsset(
      {
        ...created("audio/wav"),
        actions: [
          { action: "c2pa.opened", ingredientIds: ["upload"] },
          { action: "c2pa.edited", digitalSourceType: "compositeSynthetic" }
        ],
        ingredients: [
          {
            id: "upload",
            title: "mine.ogg",
            format: "audio/ogg",
            relationship: "parentOf",
            bytes: Buffer.from("OggS...")
          }
        ]
      },
      wav(500),
      signer
    )
    const report = await readAsset(edit, "audio/wav")
    expect(report.state).toBe("Valid")
    expect(report.manifests[0]?.ingredients).toMatchObject([
      { title: "mine.ogg", relationship: "parentOf", manifest: null }
    ])
  })

  it("reads a file without a manifest as Missing", async () => {
    expect((await readAsset(wav(100), "audio/wav")).state).toBe("Missing")
  })
})

describe("loadSigningCredentials", () => {
  it("refuses an expired chain, a wrong key and a non-PEM, naming the part", async () => {
    const later = new Date(Date.now() + 11 * 365 * 24 * 3600 * 1000)
    await expect(loadSigningCredentials(local.chainPem, local.keyPem, later)).rejects.toMatchObject({
      part: "certificate",
      message: expect.stringMatching(/expired/)
    })
    const other = await makeLocalCredentials()
    await expect(loadSigningCredentials(local.chainPem, other.keyPem)).rejects.toMatchObject({ part: "key" })
    await expect(loadSigningCredentials("nonsense", local.keyPem)).rejects.toMatchObject({ part: "certificate" })
  })

  it("refuses the CA's own certificate as the signer", async () => {
    await expect(loadSigningCredentials(local.caPem, local.keyPem)).rejects.toMatchObject({
      part: "certificate",
      message: expect.stringMatching(/CA certificate/)
    })
  })
})

describe("signSidecar and readSidecar", () => {
  it("keeps a MIDI file as it is and reads its sidecar Valid against it, Invalid against another", async () => {
    const midi = new TextEncoder().encode("MThd\0\0\0\x06\0\0\0\x01\0\x60MTrk\0\0\0\x04\0\xff\x2f\0")
    const sidecar = await signSidecar(created("audio/midi"), midi, signer)
    const report = await readSidecar(sidecar, midi)
    expect(report.state).toBe("Valid")
    expect(report.manifests[0]?.actions[0]?.action).toBe("c2pa.created")
    expect((await readSidecar(sidecar, midi, { trustAnchors: local.caPem })).state).toBe("Trusted")
    const changed = new Uint8Array(midi)
    changed[20] = 1
    expect((await readSidecar(sidecar, changed)).state).toBe("Invalid")
  })
})
