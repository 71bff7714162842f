/**
 * A path segment's text, or undefined when its percent-escapes do not decode (`%E0%A4%A`,
 * `%C0%AF`, a `%` with no hex after it): such a path names nothing, and every surface answers it
 * as one it does not know, never with the URIError `decodeURIComponent` throws.
 */
export const decodePathSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}
