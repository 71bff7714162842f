/** Loads the server configuration from a given environment, as `pnpm start` reads its own. */
import { ConfigProvider, Effect, Exit } from "effect"
import { loadConfig } from "../../src/config.ts"

export const loadConfigFrom = (env: Record<string, string>) =>
  Effect.runPromiseExit(loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))))

/** The failure's cause as text, to look for the variable it names; throws when loading succeeds. */
export const configFailureOf = async (env: Record<string, string>): Promise<string> => {
  const exit = await loadConfigFrom(env)
  if (Exit.isSuccess(exit)) throw new Error("expected a configuration error")
  return JSON.stringify(exit.cause)
}
