/**
 * The Streamable HTTP transport's Origin rule, against DNS rebinding: a browser page of another
 * site may not drive the endpoint. No Origin (agents, servers, command-line clients) is fine, and
 * so is the service's own origin; a service on a loopback address also takes any loopback origin
 * (a local inspector on another port), while a public service takes none.
 */
const isLoopback = (hostname: string): boolean =>
  hostname === "localhost" ||
  hostname.endsWith(".localhost") ||
  hostname === "[::1]" ||
  /^127(\.\d{1,3}){3}$/.test(hostname)

export const originPolicy = (publicUrl: string): ((origin: string | undefined) => boolean) => {
  const own = new URL(publicUrl)
  const loopbackService = isLoopback(own.hostname)
  return (origin) => {
    if (origin === undefined || origin === own.origin) return true
    if (!URL.canParse(origin)) return false
    const url = new URL(origin)
    return loopbackService && (url.protocol === "http:" || url.protocol === "https:") && isLoopback(url.hostname)
  }
}
