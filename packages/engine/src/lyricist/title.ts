// A draft's title: the brief's own, else the hook's words in title case.

/** Words a title leaves in lower case (after its first). */
const MINOR = new Set("a an the and or but nor of to in on at by for from with as".split(" "))

const TITLE_MAX_CHARS = 80

/** The brief's title, or the hook's words in title case. */
export function titleOf(given: string | null, hook: string): string {
  if (given !== null && given.trim() !== "") return given.trim().slice(0, 200)
  const words = hook
    .replace(/[^\p{L}\p{N}' ]+/gu, " ")
    .trim()
    .split(/\s+/)
  let title = ""
  for (const w of words) {
    const next = title === "" ? w : `${title} ${w}`
    if (next.length > TITLE_MAX_CHARS) break
    title = next
  }
  const cased = title
    .split(" ")
    .map((w, i) => (i > 0 && MINOR.has(w.toLowerCase()) ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join(" ")
  return cased === "" ? "Untitled" : cased
}
