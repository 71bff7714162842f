/**
 * The embedded default's first-run account: a Pro account with credits and an API key, so a
 * newcomer can call the API straight away, and a generated sign-in password, so the sign-in
 * page and the OAuth flow can be tried too. Both are kept in DATA_DIR/bootstrap.json (local
 * development only, mode 0600) so every start can point at them again; the password is never
 * printed nor logged.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { z } from "zod"
import { Accounts, ApiKeys, randomBase62, scopeNames } from "@lyre/core"
import type { AppRuntime } from "./app.ts"

/** `password` is absent in files written before accounts had one. */
const BootstrapFile = z.object({
  account_id: z.string(),
  email: z.string(),
  api_key: z.string(),
  password: z.string().optional()
})
export type Bootstrap = z.infer<typeof BootstrapFile>

export const bootstrapEmbedded = async (runtime: AppRuntime, dataDir: string): Promise<Bootstrap> => {
  const file = join(dataDir, "bootstrap.json")
  if (existsSync(file)) return BootstrapFile.parse(JSON.parse(readFileSync(file, "utf8")))
  const password = randomBase62(20)
  const created = await runtime.runPromise(
    Effect.gen(function* () {
      const account = yield* Accounts.use((accounts) =>
        accounts.create({
          email: "demo@lyre.local",
          password,
          plan: "pro",
          subscription_credits: 5_000,
          onetime_credits: 0
        })
      )
      const key = yield* ApiKeys.use((keys) =>
        keys.create(account.id, { name: "bootstrap", scopes: [...scopeNames], expiresAt: null })
      )
      return { account_id: account.id, email: account.email, api_key: key.key, password }
    })
  )
  writeFileSync(file, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 })
  return created
}
