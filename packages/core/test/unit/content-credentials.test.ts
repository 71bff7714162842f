/**
 * What a file's content credentials say (provenance/origin.ts) and the service that signs them:
 * a new song is `c2pa.created` by the engine's `algorithmicMedia`, an upstream's is
 * `trainedAlgorithmicMedia`, a tool on the user's upload is a composite, an edit opens its
 * source and names it as its ingredient; nothing names the account.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { loadSigningCredentials, makeLocalCredentials, readAsset, readSidecar } from "@lyre/provenance"
import { pcmWav } from "../../../provenance/test/support/audio.ts"
import { ContentCredentials, digitalSourceTypeOf, manifestOf } from "../../src/index.ts"
import type { FileOrigin } from "../../src/index.ts"

const product = { name: "Lyre", version: "9.9.9" }
const song: FileOrigin = { work: "song", model: "aether", maker: "engine", userAudio: false, source: null }
const source = { storageKey: "gen_1/0.wav", title: "First", contentType: "audio/wav" }

const wav = (samples: number): Uint8Array => pcmWav(samples, { sample: (i) => (i * 37) % 3000 })

describe("the manifest of a file", () => {
  it("names the digital source type by maker and by the user's audio", () => {
    expect(digitalSourceTypeOf(song)).toBe("algorithmicMedia")
    expect(digitalSourceTypeOf({ ...song, maker: "http" })).toBe("trainedAlgorithmicMedia")
    expect(digitalSourceTypeOf({ ...song, maker: "http", userAudio: true })).toBe(
      "compositeWithTrainedAlgorithmicMedia"
    )
    expect(digitalSourceTypeOf({ ...song, userAudio: true })).toBe("compositeSynthetic")
  })

  it("creates a new song, and opens then edits or transcodes a source", () => {
    const created = manifestOf(song, { title: "a.mp3", format: "audio/mpeg" }, product)
    expect(created.claimGenerator).toEqual(product)
    expect(created.actions).toEqual([
      {
        action: "c2pa.created",
        digitalSourceType: "algorithmicMedia",
        softwareAgent: { name: "Lyre built-in engine", version: "9.9.9" }
      }
    ])
    const edit = manifestOf(
      { ...song, work: "edit", source, maker: "http" },
      { title: "b", format: "audio/mpeg" },
      product
    )
    expect(edit.actions.map((action) => action.action)).toEqual(["c2pa.opened", "c2pa.edited"])
    expect(edit.actions[1]?.softwareAgent).toEqual({ name: "http model aether" })
    const wavExport = manifestOf({ ...song, work: "wav", source }, { title: "c.wav", format: "audio/wav" }, product)
    expect(wavExport.actions[1]?.action).toBe("c2pa.transcoded")
  })
})

describe("ContentCredentials", () => {
  it.effect("signs a WAV edit naming its source, and a MIDI beside a sidecar", () =>
    Effect.gen(function* () {
      const local = yield* Effect.promise(() => makeLocalCredentials())
      const signer = yield* Effect.promise(() => loadSigningCredentials(local.chainPem, local.keyPem))
      const credentials = yield* ContentCredentials.pipe(Effect.provide(ContentCredentials.layer(signer, product)))
      const first = yield* credentials.sign({ bytes: wav(400), contentType: "audio/wav", title: "First" }, song, null)
      const edited = yield* credentials.sign(
        { bytes: wav(500), contentType: "audio/wav", title: "Second" },
        { ...song, work: "edit", source },
        first.bytes
      )
      assert.isNull(edited.sidecar)
      const report = yield* Effect.promise(() => readAsset(edited.bytes, "audio/wav"))
      expect(report.state).toBe("Valid")
      expect(report.manifests.map((manifest) => manifest.title)).toEqual(["Second", "First"])
      expect(JSON.stringify(report)).not.toMatch(/acct_|@/)
      const midi = new TextEncoder().encode("MThd\0\0\0\x06\0\0\0\x01\0\x60")
      const signedMidi = yield* credentials.sign({ bytes: midi, contentType: "audio/midi", title: "m.mid" }, song, null)
      expect(signedMidi.bytes).toEqual(midi)
      assert.isNotNull(signedMidi.sidecar)
      expect((yield* Effect.promise(() => readSidecar(signedMidi.sidecar ?? new Uint8Array(), midi))).state).toBe(
        "Valid"
      )
      const image = yield* credentials.sign({ bytes: midi, contentType: "image/png", title: "c.png" }, song, null)
      expect(image).toEqual({ bytes: midi, sidecar: null })
    })
  )
})
