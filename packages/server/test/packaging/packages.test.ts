/**
 * The packages as a user gets them: every public package is packed with pnpm (its `prepack`
 * builds it), the tarballs are installed into a project outside the workspace, and that project
 * type-checks and runs the files in `test/packaging/fixtures/`. publint and arethetypeswrong
 * judge each tarball. One build, one pack and one install for the whole file.
 *
 * The install (support/installTarballs.ts) takes our packages from the tarballs alone and every
 * other package from pnpm's store at the version of the workspace's lockfile, through a registry
 * on loopback: no network when the store holds them (a fresh clone's `pnpm install` fills it),
 * and a layout in which a package finds only what it declares.
 *
 * The build is TypeScript 7's (the native compiler, as every build and type check of the
 * workspace); the user's project is checked by it and by the TypeScript 5.9 many users still run
 * (record 0135).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { publint } from "publint"
import { formatMessage } from "publint/utils"
// TypeScript 5.9 for its scanner: TypeScript 7's package offers no JavaScript API but unstable paths.
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pnpm, run, succeed } from "./support/commands.ts"
import { installTarballs } from "./support/installTarballs.ts"

const root = join(import.meta.dirname, "../../../..")
const fixtures = join(import.meta.dirname, "fixtures")
/** The workspace's compiler, TypeScript 7; run on one thread, the cheapest in CPU on two busy cores. */
const tsc = join(root, "node_modules/typescript-native/bin/tsc")
/** TypeScript 5.9, the compiler many users still run. */
const tsc5 = join(root, "node_modules/typescript/bin/tsc")

interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly dependencies?: Readonly<Record<string, string>>
  readonly peerDependencies?: Readonly<Record<string, string>>
}

const manifests = readdirSync(join(root, "packages")).map((dir) => ({
  dir,
  manifest: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) as Manifest
}))
const publicPackages = manifests.filter(({ manifest }) => manifest.private !== true)

/** Runs one of the fixture files in the project and returns the JSON line it prints. */
const runFixture = async (file: string): Promise<Record<string, unknown>> => {
  const stdout = await succeed(process.execPath, [file], project)
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>
}

const scratch = mkdtempSync(join(tmpdir(), "lyre-packages-"))
const tarballs = join(scratch, "tarballs")
const project = join(scratch, "project")
const tarballOf = new Map<string, string>()

beforeAll(async () => {
  // A private package a public one needs would be looked up on the registry under our name.
  const publicNames = new Set(publicPackages.map(({ manifest }) => manifest.name))
  const unpublished = publicPackages.flatMap(({ manifest }) =>
    Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
      .filter((name) => name.startsWith("@lyre/") && !publicNames.has(name))
      .map((name) => `${manifest.name} needs the private ${name}`)
  )
  if (unpublished.length > 0) throw new Error(`Make these public or drop the dependency: ${unpublished.join("; ")}`)
  // One tsc for every package, so that no two prepack builds write the same files at once.
  await succeed(
    process.execPath,
    [tsc, "-b", "--singleThreaded", ...publicPackages.map(({ dir }) => join("packages", dir, "tsconfig.build.json"))],
    root
  )
  const [command, prefix] = pnpm()
  await succeed(
    command,
    [
      ...prefix,
      "-r",
      // The builds are done: each prepack's tsc finds nothing to write.
      "--workspace-concurrency=2",
      ...publicPackages.flatMap(({ dir }) => ["--filter", `./packages/${dir}`]),
      "pack",
      "--pack-destination",
      tarballs
    ],
    root
  )
  for (const { manifest } of publicPackages) {
    tarballOf.set(
      manifest.name,
      join(tarballs, `${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`)
    )
  }

  mkdirSync(project)
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023",
        // effect's declarations name Web Crypto types (CryptoKey, JsonWebKey) that live in the DOM lib.
        lib: ["es2023", "dom"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        noEmit: true,
        // Our declarations are checked too, not only the code that uses them.
        skipLibCheck: false,
        erasableSyntaxOnly: true,
        verbatimModuleSyntax: true,
        types: ["node"],
        typeRoots: [join(root, "node_modules/@types")]
      },
      include: ["*.ts"]
    })
  )
  for (const file of readdirSync(fixtures)) copyFileSync(join(fixtures, file), join(project, file))
  const { fetchedUpstream } = await installTarballs({
    workspace: root,
    tarballs: [...tarballOf.values()],
    project,
    packages: join(scratch, "packages")
  })
  if (fetchedUpstream.length > 0)
    console.warn(`Not in pnpm's store, so fetched from the registry: ${fetchedUpstream.join(", ")}`)
}, 600_000)

afterAll(() => rmSync(scratch, { recursive: true, force: true }), 300_000)

/** Runs `task` over `items`, `width` at a time; the results in the items' order. */
const inTurns = async <A, B>(items: ReadonlyArray<A>, width: number, task: (item: A) => Promise<B>) => {
  const results: Array<B> = []
  let next = 0
  const turn = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await task(items[i] as A)
  }
  await Promise.all(Array.from({ length: width }, turn))
  return results
}

describe("the published packages", () => {
  it("the public ones are core, webhooks, server, client and cli, and what server needs at run time", () => {
    const names = publicPackages.map(({ manifest }) => manifest.name)
    expect(names).toEqual(
      expect.arrayContaining(["@lyre/core", "@lyre/webhooks", "@lyre/server", "@lyre/client", "@lyre/cli"])
    )
    expect(names).not.toContain("@lyre/fake-upstream")
  })

  it("each tarball holds its build and passes publint and arethetypeswrong", async () => {
    // Each arethetypeswrong is a process that loads its own TypeScript: one a core.
    const judged = await inTurns([...tarballOf], 2, async ([name, file]) => {
      const tarball = readFileSync(file)
      const { messages, pkg } = await publint({
        pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
        strict: true
      })
      // ESM only: CommonJS `require` of these packages is not offered, so that profile is the one that applies.
      const attw = await run(join(root, "node_modules/.bin/attw"), [file, "--profile", "esm-only", "--no-color"], root)
      return {
        publint: messages.map((message) => `${name}: ${formatMessage(message, pkg) ?? message.code}`),
        attw: attw.code === 0 ? [] : [`${name}: attw exited ${attw.code}\n${attw.stdout}${attw.stderr}`]
      }
    })
    expect(judged.flatMap((judgement) => judgement.publint)).toEqual([])
    expect(judged.flatMap((judgement) => judgement.attw)).toEqual([])
  }, 180_000)

  it("each package declares every package its built code and declarations import", () => {
    const packageOf = (specifier: string) =>
      specifier
        .split("/")
        .slice(0, specifier.startsWith("@") ? 2 : 1)
        .join("/")
    for (const { manifest } of publicPackages) {
      const installed = join(project, "node_modules", manifest.name)
      const declared = new Set([
        manifest.name,
        ...Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
      ])
      const files = readdirSync(join(installed, "dist"), { recursive: true, encoding: "utf8" }).filter((file) =>
        /\.(js|d\.ts)$/.test(file)
      )
      const undeclared = new Set<string>()
      for (const file of files) {
        const text = readFileSync(join(installed, "dist", file), "utf8")
        // TypeScript's own scanner finds imports, re-exports and import() calls, not words in strings.
        const specifiers = ts
          .preProcessFile(text, true, true)
          .importedFiles.map((reference) => reference.fileName)
          .filter((specifier) => !specifier.startsWith("."))
        for (const specifier of specifiers) {
          const name = packageOf(specifier)
          if (!specifier.startsWith("node:") && !builtinModules.includes(name) && !declared.has(name))
            undeclared.add(`${file}: ${specifier}`)
        }
      }
      expect([...undeclared], manifest.name).toEqual([])
    }
  })

  // Declarations TypeScript 7 wrote, read by the TypeScript 5.9 that many projects still pin
  // (what a newer compiler emits is what an older one may not read) and by TypeScript 7, npm's latest.
  it.each([
    { compiler: "TypeScript 5.9", command: [tsc5] },
    { compiler: "TypeScript 7", command: [tsc, "--singleThreaded"] }
  ])(
    "(a) a TypeScript project type-checks against the installed declarations with $compiler",
    async ({ command }) => {
      const result = await run(process.execPath, [...command, "-p", "tsconfig.json"], project)
      expect(result.stdout + result.stderr).toBe("")
      expect(result.code).toBe(0)
    },
    120_000
  )

  it("(b) @lyre/core validates a request and prices it with no database, loading no driver", async () => {
    const out = await runFixture("pure.ts")
    const loadedBySchemas = out["loadedBySchemas"] as ReadonlyArray<string>
    const loaded = out["loaded"] as ReadonlyArray<string>
    expect(loadedBySchemas.filter((url) => url.startsWith("node:") || /\/(@trpc|@lyre\/webhooks)\//.test(url))).toEqual(
      []
    )
    expect(loaded.filter((url) => /\/(ioredis|pg|postgres|@effect\/sql-pg|@electric-sql)\//.test(url))).toEqual([])
    expect(out["valid"]).toEqual({
      value: { style: "synthwave", title: "Night Drive", lyrics: "Neon", instrumental: false, model: "echo" },
      price: 100
    })
    expect(out["crossField"]).toMatchObject({
      status: 400,
      body: {
        error: { type: "invalid_request_error", code: "parameter_not_supported_for_model", param: "style_weight" }
      }
    })
    expect(out["missing"]).toMatchObject({
      status: 400,
      body: { error: { code: "missing_parameter", param: "lyrics" } }
    })
    expect(out["prices"]).toEqual({ aether: 50, echo: 100, nocturne: 180 })
  })

  it("(c) @lyre/webhooks verifies a signed event and refuses a tampered or stale one", async () => {
    expect(await runFixture("webhooks.ts")).toEqual({
      type: "job.failed",
      refunded: 50,
      tampered: "signature_mismatch",
      stale: "timestamp_outside_tolerance"
    })
  })

  it("(d, e) createLyre mounted in a plain node:http server; @lyre/client: /v1/me, create, wait, download; the dashboard ships", async () => {
    const out = await runFixture("embed.ts")
    expect(out["me"]).toMatchObject({ plan: "pro", credits: { total: 1000 } })
    expect(out["created"]).toEqual({ status: "pending", charged: 50 })
    expect(out["progress"]).toContain("ready")
    expect(out["task"]).toEqual({ status: "ready", tracks: 2, error: null })
    expect(out["audio"]).toMatchObject({ type: "audio/mpeg", frameSync: true })
    expect(out["dashboard"]).toEqual({ page: 200, script: 200 })
  }, 240_000)
})
