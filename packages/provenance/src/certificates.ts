/**
 * The operator's signing credential: a PEM certificate chain (end entity first) and its PKCS #8
 * private key, ES256 (P-256) or Ed25519. c2pa-rs refuses to sign or validate with an end-entity
 * certificate outside the C2PA profile, so the profile is checked here, once, at start: X.509 v3,
 * not a CA, key usage critical with digitalSignature, an extended key usage C2PA accepts, not
 * self-signed, inside its validity; and the key must be the certificate's.
 *
 * The embedded default makes its own: a local CA and an end-entity certificate it issues,
 * which no trust list holds (readers say "untrusted" beside "valid").
 */
import "reflect-metadata"
import { webcrypto } from "node:crypto"
import * as x509 from "@peculiar/x509"
import type { CoseSigner, SigningAlgorithm } from "./cose.ts"

const subtle = webcrypto.subtle
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0])

type CryptoKey = webcrypto.CryptoKey
type CryptoKeyPair = webcrypto.CryptoKeyPair

/** Which setting a problem is with: the chain or the key. */
export type CredentialPart = "certificate" | "key"

export class CredentialProblem extends Error {
  readonly part: CredentialPart
  constructor(part: CredentialPart, message: string) {
    super(message)
    this.name = "CredentialProblem"
    this.part = part
  }
}

/** Extended key usages C2PA accepts for a claim signer. */
export const claimSigningUsages: ReadonlyArray<string> = [
  "1.3.6.1.5.5.7.3.4", // id-kp-emailProtection
  "1.3.6.1.5.5.7.3.36", // id-kp-documentSigning
  "1.3.6.1.4.1.62558.2.1" // c2pa-kp-claimSigning
]

export interface SigningCredentials extends CoseSigner {
  readonly subject: string
  readonly issuer: string
  readonly notAfter: Date
}

const ecdsa = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const
const ed25519 = { name: "Ed25519" } as const

const algorithmOf = (certificate: x509.X509Certificate): SigningAlgorithm | null => {
  const algorithm = certificate.publicKey.algorithm as { name?: string; namedCurve?: string }
  if (algorithm.name === "ECDSA" && algorithm.namedCurve === "P-256") return "es256"
  if (algorithm.name === "Ed25519") return "ed25519"
  return null
}

const signParameters = (algorithm: SigningAlgorithm) =>
  algorithm === "es256" ? { name: "ECDSA", hash: "SHA-256" } : { name: "Ed25519" }

/** Why the end-entity certificate cannot sign C2PA claims, or null. */
const profileProblem = (certificate: x509.X509Certificate, now: Date): string | null => {
  if (now < certificate.notBefore) return `is not valid before ${certificate.notBefore.toISOString()}`
  if (now > certificate.notAfter) return `expired on ${certificate.notAfter.toISOString()}`
  const constraints = certificate.getExtension(x509.BasicConstraintsExtension)
  if (constraints?.ca === true) return "is a CA certificate; C2PA claims are signed by an end-entity certificate"
  const usage = certificate.getExtension(x509.KeyUsagesExtension)
  if (usage === null || !usage.critical || (usage.usages & x509.KeyUsageFlags.digitalSignature) === 0) {
    return "needs a critical key usage extension with digitalSignature"
  }
  const extended = certificate.getExtension(x509.ExtendedKeyUsageExtension)
  if (extended === null || !extended.usages.some((oid) => claimSigningUsages.includes(String(oid)))) {
    return "needs an extended key usage C2PA accepts (emailProtection, documentSigning or c2pa claimSigning)"
  }
  if (certificate.subject === certificate.issuer) return "is self-signed; C2PA needs a certificate issued by a CA"
  return null
}

/**
 * Reads and checks a chain and its key; fails with a `CredentialProblem` naming the part at fault.
 * `now` is the time the chain must be valid at.
 */
export const loadSigningCredentials = async (
  certificatePem: string,
  keyPem: string,
  now: Date = new Date()
): Promise<SigningCredentials> => {
  let chain: Array<x509.X509Certificate>
  try {
    chain = x509.PemConverter.decode(certificatePem).map((der) => new x509.X509Certificate(der))
  } catch (cause) {
    throw new CredentialProblem("certificate", `is not a PEM certificate chain (${String(cause)})`)
  }
  const leaf = chain[0]
  if (leaf === undefined) throw new CredentialProblem("certificate", "holds no PEM certificate")
  const algorithm = algorithmOf(leaf)
  if (algorithm === null) throw new CredentialProblem("certificate", "must hold an ES256 (P-256) or Ed25519 public key")
  const problem = profileProblem(leaf, now)
  if (problem !== null) throw new CredentialProblem("certificate", `the signing certificate ${problem}`)
  for (const issuer of chain.slice(1)) {
    if (now > issuer.notAfter) {
      throw new CredentialProblem(
        "certificate",
        `${issuer.subject} in the chain expired on ${issuer.notAfter.toISOString()}`
      )
    }
  }
  let privateKey: CryptoKey
  try {
    const [der] = x509.PemConverter.decode(keyPem)
    if (der === undefined) throw new Error("no PEM block")
    privateKey = await subtle.importKey("pkcs8", der, algorithm === "es256" ? ecdsa : ed25519, false, ["sign"])
  } catch (cause) {
    throw new CredentialProblem(
      "key",
      `is not a PKCS #8 PEM private key for the certificate's ${algorithm} (${String(cause)})`
    )
  }
  const sign = async (data: Uint8Array): Promise<Uint8Array> =>
    new Uint8Array(await subtle.sign(signParameters(algorithm), privateKey, data as Uint8Array<ArrayBuffer>))
  const probe = new TextEncoder().encode("lyre")
  const publicKey = await leaf.publicKey.export(algorithm === "es256" ? ecdsa : ed25519, ["verify"])
  if (!(await subtle.verify(signParameters(algorithm), publicKey, await sign(probe), probe))) {
    throw new CredentialProblem("key", "is not the private key of the signing certificate")
  }
  return {
    algorithm,
    chain: chain.map((certificate) => new Uint8Array(certificate.rawData)),
    sign,
    subject: leaf.subject,
    issuer: leaf.issuer,
    notAfter: leaf.notAfter
  }
}

export interface LocalCredentials {
  /** The local CA's certificate: the trust anchor a reader may be given. */
  readonly caPem: string
  /** The signing certificate then the CA's, PEM. */
  readonly chainPem: string
  /** The signing key, PKCS #8 PEM. */
  readonly keyPem: string
}

const serial = (): string =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString("hex")
    .replace(/^[89a-f]/, "1")

/** A local CA (20 years) and an ES256 signing certificate it issues (10 years), for the embedded default. */
export const makeLocalCredentials = async (name = "Lyre", now: Date = new Date()): Promise<LocalCredentials> => {
  const notBefore = new Date(now.getTime() - 60 * 60 * 1000)
  const year = 365 * 24 * 60 * 60 * 1000
  const caKeys = (await subtle.generateKey(ecdsa, true, ["sign", "verify"])) as CryptoKeyPair
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name} local content credentials CA, O=${name}`,
    notBefore,
    notAfter: new Date(now.getTime() + 20 * year),
    keys: caKeys,
    signingAlgorithm: ecdsa,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey)
    ]
  })
  const keys = (await subtle.generateKey(ecdsa, true, ["sign", "verify"])) as CryptoKeyPair
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${name} content credentials, O=${name}`,
    issuer: ca.subject,
    notBefore,
    notAfter: new Date(now.getTime() + 10 * year),
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ecdsa,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.emailProtection, "1.3.6.1.5.5.7.3.36"], false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey)
    ]
  })
  const pkcs8 = await subtle.exportKey("pkcs8", keys.privateKey)
  return {
    caPem: ca.toString("pem"),
    chainPem: `${leaf.toString("pem")}\n${ca.toString("pem")}\n`,
    keyPem: `${x509.PemConverter.encode(pkcs8, "PRIVATE KEY")}\n`
  }
}
