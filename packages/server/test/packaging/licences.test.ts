/**
 * What the service ships is under permissive licences: no package among the runtime dependencies
 * of the workspace's packages is GPL or AGPL (decisions 0026 and 0081; the tests' own outside
 * judges, essentia.js among them, are development dependencies). LGPL libraries used unchanged
 * (codec-parser) are allowed. pnpm's own `licenses list` reads the installed tree.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { pnpm } from "./support/commands.ts"

const root = fileURLToPath(new URL("../../../../", import.meta.url))

interface Licensed {
  readonly name: string
  readonly versions: ReadonlyArray<string>
}

describe("licences of what the service ships", () => {
  it("no GPL or AGPL package among the runtime dependencies; essentia.js only in development", {
    timeout: 120_000
  }, async () => {
    const [command, prefix] = pnpm()
    const { stdout } = await promisify(execFile)(command, [...prefix, "licenses", "list", "--prod", "--json", "-r"], {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024
    })
    const byLicence = JSON.parse(stdout) as Record<string, ReadonlyArray<Licensed>>
    const copyleft = Object.entries(byLicence)
      .filter(([licence]) => /(^|[^L])GPL/i.test(licence))
      .flatMap(([licence, packages]) => packages.map((p) => `${p.name}@${p.versions.join(",")} (${licence})`))
    expect(copyleft).toEqual([])
    const shipped = Object.values(byLicence)
      .flat()
      .map((p) => p.name)
    expect(shipped).toContain("music-tempo")
    expect(shipped).not.toContain("essentia.js")
  })
})
