/**
 * The content credentials signer a spawned production process is started with: production
 * refuses to start without C2PA_SIGNING_CERT and C2PA_SIGNING_KEY (decision 0131). A local pair,
 * made once per test file.
 */
import { makeLocalCredentials } from "@lyre/provenance"

let made: Promise<{ readonly C2PA_SIGNING_CERT: string; readonly C2PA_SIGNING_KEY: string }> | undefined

export const signingEnv = () =>
  (made ??= makeLocalCredentials().then((local) => ({
    C2PA_SIGNING_CERT: local.chainPem,
    C2PA_SIGNING_KEY: local.keyPem
  })))
