/**
 * The content credentials' signer at start: C2PA_SIGNING_CERT and C2PA_SIGNING_KEY go together;
 * an expired chain, a key that is not the certificate's or a CA certificate stops the start with
 * the variable named; unset, a local pair is made once into DATA_DIR/c2pa and kept.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { ContentCredentials } from "@lyre/core"
import { makeLocalCredentials } from "@lyre/provenance"
import type { ServerConfig } from "../../src/config.ts"
import { contentCredentialsLayer } from "../../src/contentCredentials.ts"
import { configFailureOf } from "../support/config.ts"

const dataDir = mkdtempSync(join(tmpdir(), "lyre-c2pa-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const configOf = (settings: Partial<ServerConfig>) =>
  ({ dataDir, c2paSigningCert: null, c2paSigningKey: null, ...settings }) as ServerConfig

const build = (settings: Partial<ServerConfig>) =>
  Effect.runPromiseExit(
    ContentCredentials.pipe(Effect.provide(Layer.fresh(contentCredentialsLayer(configOf(settings)))), Effect.scoped)
  )

const failureOf = async (settings: Partial<ServerConfig>): Promise<string> => {
  const exit = await build(settings)
  if (Exit.isSuccess(exit)) throw new Error("expected the start to fail")
  return JSON.stringify(exit.cause)
}

describe("C2PA_SIGNING_CERT and C2PA_SIGNING_KEY", () => {
  it("go together", async () => {
    expect(await configFailureOf({ C2PA_SIGNING_CERT: "-----BEGIN CERTIFICATE-----" })).toMatch(
      /C2PA_SIGNING_CERT and C2PA_SIGNING_KEY go together/
    )
  })

  it("stop the start on an expired chain, another key or a CA certificate, naming the variable", async () => {
    const expired = await makeLocalCredentials("Old", new Date(Date.now() - 21 * 365 * 24 * 3600 * 1000))
    expect(await failureOf({ c2paSigningCert: expired.chainPem, c2paSigningKey: expired.keyPem })).toMatch(
      /C2PA_SIGNING_CERT: the signing certificate expired on/
    )
    const mine = await makeLocalCredentials()
    const other = await makeLocalCredentials()
    expect(await failureOf({ c2paSigningCert: mine.chainPem, c2paSigningKey: other.keyPem })).toMatch(
      /C2PA_SIGNING_KEY: is not the private key of the signing certificate/
    )
    expect(await failureOf({ c2paSigningCert: mine.caPem, c2paSigningKey: mine.keyPem })).toMatch(
      /C2PA_SIGNING_CERT: the signing certificate is a CA certificate/
    )
    // Paths to PEM files are read as the PEM itself.
    const certFile = join(dataDir, "chain.pem")
    const keyFile = join(dataDir, "key.pem")
    writeFileSync(certFile, mine.chainPem)
    writeFileSync(keyFile, mine.keyPem)
    expect(Exit.isSuccess(await build({ c2paSigningCert: certFile, c2paSigningKey: keyFile }))).toBe(true)
  })

  it("unset, make a local pair once into DATA_DIR/c2pa and keep it", async () => {
    expect(Exit.isSuccess(await build({}))).toBe(true)
    const chain = readFileSync(join(dataDir, "c2pa", "signing-chain.pem"), "utf8")
    expect(Exit.isSuccess(await build({}))).toBe(true)
    expect(readFileSync(join(dataDir, "c2pa", "signing-chain.pem"), "utf8")).toBe(chain)
  })
})
