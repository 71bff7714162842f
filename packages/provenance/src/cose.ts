/**
 * The claim signature c2pa-rs embeds: a tagged COSE_Sign1 (RFC 9052) over the claim, made here
 * because the WebAssembly build hands its signer the claim and takes the whole structure back.
 * The protected header names the algorithm and carries the certificate chain (`x5chain`, label
 * 33, end entity first); the payload is detached. The structure must fill the box c2pa-rs
 * reserved for it exactly: a shorter one leaves the asset's exclusion range wrong, and the file
 * reads back Invalid (`claimSignature.mismatch`), so the unprotected header's `pad` takes up the
 * rest, as c2pa-rs pads its own signatures.
 */
import { encode } from "cborg"

export type SigningAlgorithm = "es256" | "ed25519"

/** COSE algorithm identifiers (RFC 9053). */
const coseAlgorithm: Readonly<Record<SigningAlgorithm, number>> = { es256: -7, ed25519: -8 }

/** The signature box's size: a chain of a few certificates and the signature, with room. */
export const reserveSize = 16_384

const coseSign1Tag = 0xd2

export interface CoseSigner {
  readonly algorithm: SigningAlgorithm
  /** DER certificates, end entity first. */
  readonly chain: ReadonlyArray<Uint8Array>
  /** The raw signature over `data` (for ES256 r and s, 32 bytes each, as WebCrypto gives them). */
  readonly sign: (data: Uint8Array) => Promise<Uint8Array>
}

const tagged = (body: Uint8Array): Uint8Array => {
  const out = new Uint8Array(body.length + 1)
  out[0] = coseSign1Tag
  out.set(body, 1)
  return out
}

/** The COSE_Sign1 of `claim`, exactly `size` bytes long. */
export const coseSign1 = async (signer: CoseSigner, claim: Uint8Array, size = reserveSize): Promise<Uint8Array> => {
  const protectedHeader = encode(
    new Map<number, unknown>([
      [1, coseAlgorithm[signer.algorithm]],
      [33, signer.chain.length === 1 ? signer.chain[0] : [...signer.chain]]
    ])
  )
  const toBeSigned = encode(["Signature1", protectedHeader, new Uint8Array(0), claim])
  const signature = await signer.sign(toBeSigned)
  const build = (pad: number) =>
    tagged(encode([protectedHeader, new Map([["pad", new Uint8Array(pad)]]), null, signature]))
  const bare = build(0)
  if (bare.length > size) throw new Error(`the claim signature (${bare.length} bytes) is larger than its box (${size})`)
  // The pad's own length field grows with it (by up to 4 bytes): measure once more.
  const first = build(size - bare.length)
  const padded = build(size - bare.length - (first.length - size))
  if (padded.length !== size) throw new Error(`the claim signature could not be padded to ${size} bytes`)
  return padded
}
