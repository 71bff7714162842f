/**
 * The floors of the repository, checked: which package may import which, which folder of
 * packages/core may import which (each folder's README.md says the same in its "May use" line,
 * ARCHITECTURE.md draws the whole), no import circles, and no library's internal or unstable
 * paths. `pnpm lint:deps`.
 */

/** What each package's shipped source (`src/`) may import of the workspace: the layering, stated once. */
const packageMayUse = {
  webhooks: [],
  provenance: [],
  engine: [],
  "fake-upstream": [],
  core: ["provenance", "webhooks"],
  http: ["core"],
  rest: ["core", "http"],
  mcp: ["core", "http"],
  a2a: ["core", "http"],
  worker: ["core", "engine"],
  client: ["core", "provenance"],
  cli: ["client", "core", "provenance"],
  dashboard: ["core", "provenance"],
  // The composition root: every surface, the worker and their shared helpers.
  server: ["a2a", "core", "http", "mcp", "provenance", "rest", "worker"]
}

/**
 * What each folder of packages/core/src may import beside itself. Every folder may also use
 * `domain` (pure shapes and rules) and `observability` (Metrics, traces), which use nothing else
 * of core; the files at the root of src (index.ts, layers.ts, schemas.ts) compose everything.
 */
const coreFolderMayUse = {
  domain: [],
  observability: [],
  sql: [],
  platform: [],
  provider: [],
  provenance: [],
  credentials: ["platform"],
  money: ["platform"],
  webhooks: ["platform"],
  generation: ["platform", "provider", "provenance", "sql", "money", "webhooks"],
  personas: ["platform", "provider", "generation"],
  uploads: ["platform", "money", "webhooks", "generation"],
  lyrics: ["platform", "provider", "money", "webhooks", "generation"],
  trpc: ["platform", "credentials", "money", "webhooks", "generation", "personas", "uploads", "lyrics"]
}
const groundFloor = ["domain", "observability"]

const alternatives = (names) => names.join("|")

const packageRules = Object.entries(packageMayUse).map(([name, uses]) => ({
  name: `package-${name}`,
  severity: "error",
  comment: `packages/${name}/src may import ${uses.length === 0 ? "no other workspace package" : uses.map((use) => `@lyre/${use}`).join(", ")} (ARCHITECTURE.md, "The floors").`,
  from: { path: `^packages/${name}/src/` },
  to: { path: `^packages/(?!(?:${alternatives([name, ...uses])})/)[^/]+/` }
}))

const coreFolderRules = Object.entries(coreFolderMayUse).map(([folder, uses]) => {
  const allowed = groundFloor.includes(folder) ? [folder] : [folder, ...groundFloor, ...uses]
  return {
    name: `core-${folder}`,
    severity: "error",
    comment: `packages/core/src/${folder} may use ${allowed.filter((use) => use !== folder).join(", ") || "nothing else of core"} (its README.md, "May use").`,
    from: { path: `^packages/core/src/${folder}/` },
    to: { path: `^packages/core/src/(?!(?:${alternatives(allowed)})/)` }
  }
})

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    ...packageRules,
    {
      name: "core-folders-known",
      severity: "error",
      comment: "Every folder of packages/core/src has a line in coreFolderMayUse here and a README.md saying the same.",
      from: { path: `^packages/core/src/(?!(?:${alternatives(Object.keys(coreFolderMayUse))})/)[^/]+/` },
      to: {}
    },
    ...coreFolderRules,
    {
      name: "no-circular",
      severity: "error",
      comment: "No module reaches itself through its imports, type-only and dynamic ones included.",
      from: {},
      to: { circular: true }
    },
    {
      name: "no-library-internals",
      severity: "error",
      comment:
        "Libraries as published: no import of a path a library marks internal, private or unstable (STYLE.md). A deep import into an undeclared dist/ path is caught by no-unresolvable, since packages are resolved through their exports.",
      from: {},
      to: {
        // A folder or file of an installed package so named.
        path: "node_modules/.*/(?:internal|private|unstable[^/]*|[^/]*do-not-import[^/]*)(?:/|\\.[cm]?[jt]s$)"
      }
    },
    {
      name: "src-dependencies-declared",
      severity: "error",
      comment:
        "Shipped source imports only libraries its package.json lists as dependencies (or peers): a devDependency or a package it does not name is not installed with it.",
      from: { path: "^packages/[^/]+/src/" },
      to: {
        dependencyTypes: ["npm-dev", "npm-no-pkg", "npm-unknown"],
        dependencyTypesNot: ["npm", "npm-peer", "npm-optional"]
      }
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment:
        "Every import names a file or a package path that exists (for packages: one their exports map offers). Vite's `?url` suffix (the dashboard's c2pa-rs WebAssembly) names an export's URL, declared in the dashboard's assets.d.ts.",
      from: {},
      to: { couldNotResolve: true, pathNot: "^@contentauth/c2pa-wasm/c2pa\\.wasm\\?url$" }
    }
  ],
  options: {
    doNotFollow: { path: "(?:^|/)node_modules/" },
    // Installed packages stay in the graph as leaves (doNotFollow), so the rules see what is imported of them.
    exclude: { path: "^packages/[^/]+/dist/" },
    // Type-only imports tie two files together for a reader and for the floors as much as any.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".d.ts", ".json"],
      mainFields: ["module", "main", "types", "typings"]
    },
    reporterOptions: { text: { highlightFocused: true } }
  }
}
