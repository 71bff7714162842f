/**
 * The operator's content credentials signer (DESIGN.md section 13), loaded once at start:
 * `C2PA_SIGNING_CERT` and `C2PA_SIGNING_KEY` (PEM text or a path to a PEM file), checked against
 * C2PA's certificate profile; a bad, expired or mismatched one stops the process with a message
 * naming the variable. Unset, a local CA and signing certificate are made once into
 * `DATA_DIR/c2pa/` (as SECRET_KEY is) and the log says that no trust list holds them.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { ContentCredentials } from "@lyre/core"
import { CredentialProblem, loadSigningCredentials, makeLocalCredentials } from "@lyre/provenance"
import { ConfigurationError } from "./config.ts"
import type { ServerConfig } from "./config.ts"

const version = (createRequire(import.meta.url)("../package.json") as { readonly version: string }).version

/** The product named as every manifest's claim generator. */
export const lyreProduct = { name: "Lyre", version }

/** A setting's PEM: the value itself, or the file it names. */
const pemOf = (value: string): string => (value.includes("-----BEGIN") ? value : readFileSync(value, "utf8"))

/**
 * The local chain and key in `DATA_DIR/c2pa/`, made at first start: written into a folder of this
 * process's, then renamed into place whole, so two processes starting at once keep one pair.
 */
const localPems = async (dataDir: string): Promise<{ readonly cert: string; readonly key: string }> => {
  const directory = join(dataDir, "c2pa")
  const chainFile = join(directory, "signing-chain.pem")
  const keyFile = join(directory, "signing-key.pem")
  if (!existsSync(chainFile)) {
    const made = await makeLocalCredentials()
    const temporary = `${directory}.${process.pid}.part`
    mkdirSync(temporary, { recursive: true, mode: 0o700 })
    writeFileSync(join(temporary, "local-ca.pem"), made.caPem)
    writeFileSync(join(temporary, "signing-key.pem"), made.keyPem, { mode: 0o600 })
    writeFileSync(join(temporary, "signing-chain.pem"), made.chainPem)
    try {
      renameSync(temporary, directory)
    } catch {
      // Another process made its pair first: that one is kept.
      rmSync(temporary, { recursive: true, force: true })
    }
  }
  return { cert: readFileSync(chainFile, "utf8"), key: readFileSync(keyFile, "utf8") }
}

export const contentCredentialsLayer = (config: ServerConfig): Layer.Layer<ContentCredentials, ConfigurationError> =>
  Layer.effect(ContentCredentials)(
    Effect.gen(function* () {
      const configured = config.c2paSigningCert !== null && config.c2paSigningKey !== null
      const pems = yield* Effect.tryPromise({
        try: async () =>
          configured
            ? { cert: pemOf(config.c2paSigningCert ?? ""), key: pemOf(config.c2paSigningKey ?? "") }
            : await localPems(config.dataDir),
        catch: (cause) =>
          new ConfigurationError({
            message: `C2PA_SIGNING_CERT and C2PA_SIGNING_KEY could not be read: ${cause instanceof Error ? cause.message : String(cause)}`
          })
      })
      const signer = yield* Effect.tryPromise({
        try: () => loadSigningCredentials(pems.cert, pems.key),
        catch: (cause) => {
          const origin = configured ? "" : ` (the local certificate in ${join(config.dataDir, "c2pa")})`
          if (cause instanceof CredentialProblem) {
            const variable = cause.part === "certificate" ? "C2PA_SIGNING_CERT" : "C2PA_SIGNING_KEY"
            return new ConfigurationError({ message: `${variable}${origin}: ${cause.message}` })
          }
          return new ConfigurationError({ message: `C2PA_SIGNING_CERT${origin}: ${String(cause)}` })
        }
      })
      if (!configured) {
        yield* Effect.logWarning(
          "content credentials are signed by a local CA made for this DATA_DIR, which is on no trust list: readers show them valid but untrusted; set C2PA_SIGNING_CERT and C2PA_SIGNING_KEY to sign as the operator"
        ).pipe(Effect.annotateLogs({ certificate: signer.subject, issuer: signer.issuer }))
      }
      return ContentCredentials.of(
        yield* ContentCredentials.pipe(Effect.provide(ContentCredentials.layer(signer, lyreProduct)))
      )
    })
  )
