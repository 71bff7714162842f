import { BlockList, isIP } from "node:net"

/**
 * Addresses a webhook may never reach in production: the receiving end would be us, our
 * neighbours or nothing routable. Node's BlockList also matches IPv4-mapped IPv6 addresses
 * (`::ffff:127.0.0.1`) against the IPv4 subnets, so they cannot slip through.
 */
const nonPublic = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], // unspecified, "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT, shared address space
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata endpoints
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const)
  nonPublic.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ["100::", 64], // discard-only
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // deprecated site-local
  ["ff00::", 8] // multicast
] as const)
  nonPublic.addSubnet(network, prefix, "ipv6")

/** True when `address` (an IP literal) is private, loopback, link-local, unique-local or otherwise not public. */
export const isPrivateAddress = (address: string): boolean => {
  const family = isIP(address)
  // Not an IP literal at all: refuse rather than guess.
  if (family === 0) return true
  return nonPublic.check(address, family === 6 ? "ipv6" : "ipv4")
}
