/**
 * Signed, expiring addresses of Lyre's own files (`{site_url}/files/<key>?expires=&signature=`):
 * what an upstream is handed as `uploadUrl` to read a track Lyre keeps. The signature is an
 * HMAC of the key and the expiry under a key derived from `SECRET_KEY`, so any process of the
 * service can make and check one; the server refuses a file asked for with a signature that is
 * wrong or past its time.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto"

/** How long an upstream has to fetch a file it was handed. */
export const signedFileSeconds = 50 * 60

const signingKey = (secret: string): Buffer => createHash("sha256").update(`lyre/files|${secret}`).digest()

const signatureOf = (secret: string, key: string, expires: number): string =>
  createHmac("sha256", signingKey(secret)).update(`${key}\n${expires}`).digest("hex")

/** The signed address of one of our files, valid until `expires` (Unix seconds); any other URL as it is. */
export const signFileUrl = (url: string, publicUrl: string, secret: string, expires: number): string => {
  const prefix = `${publicUrl}/files/`
  if (!url.startsWith(prefix)) return url
  const key = url.slice(prefix.length).split("?")[0] ?? ""
  return `${prefix}${key}?expires=${expires}&signature=${signatureOf(secret, decodeURIComponent(key), expires)}`
}

/**
 * Whether a request for file `key` may be answered: unsigned requests may (our files are public
 * by address); a signed one only with its own signature, before its expiry.
 */
export const fileRequestAllowed = (
  secret: string,
  key: string,
  params: { readonly expires: string | null; readonly signature: string | null },
  nowSeconds: number
): boolean => {
  if (params.expires === null && params.signature === null) return true
  if (params.expires === null || params.signature === null || !/^\d{1,12}$/.test(params.expires)) return false
  const expires = Number(params.expires)
  if (expires < nowSeconds) return false
  const expected = Buffer.from(signatureOf(secret, key, expires))
  const given = Buffer.from(params.signature)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
