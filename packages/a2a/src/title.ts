/**
 * A text-only message is a style description; the song still needs a title. It is the
 * description's first few words, each capitalised: short enough for any upstream, never empty.
 */
const maxWords = 5
const maxLength = 80

export const titleFromStyle = (style: string): string => {
  const firstLine = style.split(/[\r\n.!?;:]/u).find((line) => line.trim() !== "") ?? ""
  const words = firstLine.match(/[\p{L}\p{N}][\p{L}\p{N}'’&-]*/gu) ?? []
  const title = words
    .slice(0, maxWords)
    .map((word) => word.charAt(0).toLocaleUpperCase() + word.slice(1))
    .join(" ")
    .slice(0, maxLength)
    .trim()
  return title === "" ? "Untitled" : title
}
