/**
 * Account passwords as scrypt hashes (node:crypto): `scrypt$<salt>$<hash>`, base64, 16-byte salt,
 * 32-byte key, Node's default cost (N = 16384, r = 8, p = 1). A password is never logged.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"

const keyLength = 32

const derive = (password: string, salt: Buffer) =>
  Effect.callback<Buffer>((resume) => {
    scrypt(password, salt, keyLength, (error, derived) => {
      if (error) resume(Effect.die(error))
      else resume(Effect.succeed(derived))
    })
  })

export const hashPassword = (password: string): Effect.Effect<string> => {
  const salt = randomBytes(16)
  return Effect.map(
    derive(password, salt),
    (derived) => `scrypt$${salt.toString("base64")}$${derived.toString("base64")}`
  )
}

/** A hash of another shape never matches, as a missing hash (no password set) does not. */
export const verifyPassword = (password: string, stored: string | null): Effect.Effect<boolean> => {
  const parts = stored?.split("$") ?? []
  if (parts.length !== 3 || parts[0] !== "scrypt") return Effect.succeed(false)
  const salt = Buffer.from(parts[1] ?? "", "base64")
  const expected = Buffer.from(parts[2] ?? "", "base64")
  if (expected.length !== keyLength) return Effect.succeed(false)
  return Effect.map(derive(password, salt), (derived) => timingSafeEqual(derived, expected))
}

/** A hash to verify against when the email is unknown, so both answers take as long. */
export const decoyPasswordHash = `scrypt$${Buffer.alloc(16).toString("base64")}$${Buffer.alloc(keyLength).toString("base64")}`
