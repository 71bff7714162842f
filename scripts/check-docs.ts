/**
 * Checks the documentation's links and the shape of its records:
 * `pnpm exec node scripts/check-docs.ts` (Node 24, the workspace's, strips the types).
 * - Every relative link in `docs/**\/*.md`, the root's `*.md` (`README.md` among them) and
 *   `packages/*\/README.md` names a file that exists, and an anchor (`#...`) names a heading of that
 *   file (GitHub's slugs).
 * - Every `docs/decisions/...` or `docs/performance/...` path named in the tree's code, benches,
 *   scripts and patches exists (a `NNNN-*` form matches the file of that number), and every
 *   "decision NNNN" or "record NNNN" in them has a decision record of that number.
 * - A decision record has the sections Context, Decision and Consequences, and fits a page
 *   (at most 60 lines and 600 words).
 * - Each index (`docs/decisions/README.md`, `docs/performance/README.md`) has one row for each
 *   file of its folder and none for a missing one, each summary at most 25 words.
 * Prints one problem a line and exits 1 if there is any.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const problems: Array<string> = []
const problem = (file: string, text: string) => problems.push(`${relative(root, file)}: ${text}`)

const filesUnder = (directory: string, keep: (name: string) => boolean): Array<string> =>
  readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) {
      return entry.name === "node_modules" || entry.name === "dist" ? [] : filesUnder(path, keep)
    }
    return keep(entry.name) ? [path] : []
  })

const rootMarkdown = readdirSync(root)
  .filter((name) => name.endsWith(".md"))
  .map((name) => join(root, name))

const markdownFiles = [
  ...filesUnder(join(root, "docs"), (name) => name.endsWith(".md")),
  ...rootMarkdown,
  ...readdirSync(join(root, "packages"))
    .map((name) => join(root, "packages", name, "README.md"))
    .filter((path) => existsSync(path))
]

/** The text outside fenced code blocks and inline code spans, where links are links. */
const proseOf = (text: string): string =>
  text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "")

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens. */
const slugOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

const anchorsCache = new Map<string, Set<string>>()
const anchorsOf = (file: string): Set<string> => {
  const known = anchorsCache.get(file)
  if (known !== undefined) return known
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const match of readFileSync(file, "utf8")
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
    .matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const slug = slugOf((match[1] ?? "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1"))
    const count = seen.get(slug) ?? 0
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
    seen.set(slug, count + 1)
  }
  anchorsCache.set(file, anchors)
  return anchors
}

for (const file of markdownFiles) {
  for (const match of proseOf(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1] ?? ""
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
    const [path = "", anchor] = target.split("#")
    const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path))
    if (!existsSync(resolved)) {
      problem(file, `link to a missing file: ${target}`)
      continue
    }
    if (anchor !== undefined && anchor !== "" && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) {
      problem(file, `link to a missing heading: ${target}`)
    }
  }
}

const recordsIn = (folder: string): Array<string> =>
  readdirSync(join(root, "docs", folder))
    .filter((name) => /^\d{4}-.*\.md$/.test(name))
    .sort()

const decisions = recordsIn("decisions")
const decisionNumbers = new Set(decisions.map((name) => name.slice(0, 4)))

// Paths and record numbers named outside the documentation.
const docPath = /docs\/(decisions|performance)\/([\w.*-]+)/g
const recordNumber = /\b(?:decisions?|records?)\s+(\d{4})\b/gi
const codeFiles = [
  ...["packages", "bench", "scripts", "patches", "test"]
    .map((name) => join(root, name))
    .filter((path) => existsSync(path) && statSync(path).isDirectory())
    .flatMap((path) => filesUnder(path, (name) => /\.(ts|tsx|js|mjs|cjs|json|patch|sh|sql|md)$/.test(name))),
  ...rootMarkdown
]
for (const file of codeFiles) {
  const text = readFileSync(file, "utf8")
  for (const match of text.matchAll(docPath)) {
    const folder = match[1] ?? ""
    const name = (match[2] ?? "").replace(/[.)]+$/, "")
    if (name === "" || name === "README.md") continue
    const names = recordsIn(folder)
    const found = name.endsWith("*")
      ? names.some((known) => known.startsWith(name.slice(0, -1)))
      : /^\d{4}$/.test(name)
        ? names.some((known) => known.startsWith(`${name}-`))
        : names.includes(name)
    if (!found) problem(file, `names a missing file: docs/${folder}/${name}`)
  }
  if (file.endsWith(".md") && file.includes(`${join(root, "docs")}`)) continue
  for (const match of text.matchAll(recordNumber)) {
    if (!decisionNumbers.has(match[1] ?? "")) problem(file, `names a missing decision: ${match[0]}`)
  }
}

const words = (text: string): number =>
  text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .split(/\s+/)
    .filter((word) => /[\p{L}\p{N}]/u.test(word)).length

for (const name of decisions) {
  const file = join(root, "docs", "decisions", name)
  const text = readFileSync(file, "utf8")
  for (const section of ["Context", "Decision", "Consequences"]) {
    if (!new RegExp(`^## ${section}\\s*$`, "m").test(text)) problem(file, `no "## ${section}" section`)
  }
  const lines = text.trimEnd().split("\n").length
  const count = words(text)
  if (lines > 60 || count > 600) problem(file, `longer than a page: ${lines} lines, ${count} words`)
}

for (const folder of ["decisions", "performance"]) {
  const index = join(root, "docs", folder, "README.md")
  if (!existsSync(index)) {
    problem(index, "missing")
    continue
  }
  const rows = readFileSync(index, "utf8")
    .split("\n")
    .filter((line) => /^\|\s*\d{4}\s*\|/.test(line))
  const listed = new Map<string, number>()
  for (const row of rows) {
    const cells = row.split(/(?<!\\)\|/).slice(1, -1)
    const target = /\]\(([^)#]+)\)/.exec(row)?.[1] ?? ""
    listed.set(target, (listed.get(target) ?? 0) + 1)
    const summary = cells.at(-1) ?? ""
    if (words(summary) > 25) problem(index, `summary of ${cells[0]?.trim()} is ${words(summary)} words`)
  }
  for (const name of recordsIn(folder)) {
    const times = listed.get(name) ?? 0
    if (times !== 1) problem(index, `${name} listed ${times} times`)
  }
  for (const target of listed.keys()) {
    if (!existsSync(join(root, "docs", folder, target))) problem(index, `row for a missing file: ${target}`)
  }
}

for (const line of problems) console.log(line)
if (problems.length > 0) {
  console.log(`${problems.length} problems`)
  process.exit(1)
}
console.log(`docs: ${markdownFiles.length} files checked, no problems`)
