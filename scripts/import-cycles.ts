/**
 * Lists the import circles among the workspace's own source files (`packages/*\/src`): modules
 * that reach themselves through relative imports, type-only and dynamic ones included, since
 * each still ties the two files together for a reader. Prints one circle a line and exits 1 if
 * there is any: `pnpm cycles` (or `node scripts/import-cycles.ts`).
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const sourceFile = /\.tsx?$/

const filesUnder = (directory: string): Array<string> =>
  readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : filesUnder(path)
    return sourceFile.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

/** Every relative specifier a file imports or re-exports, statically or with `import()`. */
const relativeImportsOf = (file: string): Array<string> =>
  ts
    .preProcessFile(readFileSync(file, "utf8"), true, true)
    .importedFiles.map((reference) => reference.fileName)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => resolve(dirname(file), specifier))

/** The strongly connected components of more than one file (Tarjan), each sorted by path. */
export const importCycles = (root: string): Array<Array<string>> => {
  const packages = join(root, "packages")
  const files = readdirSync(packages).flatMap((name) => {
    const src = join(packages, name, "src")
    try {
      return filesUnder(src)
    } catch {
      return []
    }
  })
  const known = new Set(files)
  const edges = new Map(files.map((file) => [file, relativeImportsOf(file).filter((target) => known.has(target))]))

  const index = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const cycles: Array<Array<string>> = []
  let counter = 0
  /** Visits a file and returns its low link, the least index its subtree reaches on the stack. */
  const connect = (file: string): number => {
    const own = counter++
    index.set(file, own)
    let lowLink = own
    stack.push(file)
    onStack.add(file)
    for (const target of edges.get(file) ?? []) {
      const seen = index.get(target)
      if (seen === undefined) lowLink = Math.min(lowLink, connect(target))
      else if (onStack.has(target)) lowLink = Math.min(lowLink, seen)
    }
    if (lowLink !== own) return lowLink
    const component: Array<string> = []
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member)
      component.push(relative(root, member))
      if (member === file) break
    }
    if (component.length > 1 || (edges.get(file) ?? []).includes(file)) cycles.push(component.sort())
    return lowLink
  }
  for (const file of files) if (!index.has(file)) connect(file)
  return cycles.sort((a, b) => (a[0] ?? "").localeCompare(b[0] ?? ""))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cycles = importCycles(resolve(dirname(fileURLToPath(import.meta.url)), ".."))
  for (const cycle of cycles) console.log(cycle.join(" <-> "))
  console.log(cycles.length === 0 ? "no import circles" : `${cycles.length} import circle(s)`)
  process.exitCode = cycles.length === 0 ? 0 : 1
}
