/**
 * Secrets of the embedded default, generated once into DATA_DIR so that restarts keep API-key
 * hashes valid and the admin token stable. Production passes them in the environment.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { randomBase62 } from "@lyre/core"

export const readOrCreateSecret = (dataDir: string, name: string, length: number): string => {
  const file = join(dataDir, name)
  if (existsSync(file)) return readFileSync(file, "utf8").trim()
  mkdirSync(dataDir, { recursive: true })
  const value = randomBase62(length)
  writeFileSync(file, `${value}\n`, { mode: 0o600 })
  return value
}
