import { randomInt } from "node:crypto"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** 32 base62 characters carry about 190 bits, well beyond what an HMAC key needs. */
const SECRET_LENGTH = 32

/** A fresh endpoint signing secret: `whsec_` followed by 32 random base62 characters. */
export const generateWebhookSecret = (): string => {
  let secret = "whsec_"
  // randomInt draws without modulo bias, so every character is uniform.
  for (let i = 0; i < SECRET_LENGTH; i++) secret += BASE62[randomInt(BASE62.length)]
  return secret
}
