/**
 * A project outside the workspace that installs our packed tarballs, and nothing else of ours,
 * with pnpm from a registry on loopback (storeRegistry.ts): our packages as packed, every other
 * one at the version the workspace's lockfile holds, its files taken from the store the
 * workspace's `pnpm install` filled. Nothing is fetched from the network when that store holds
 * them all.
 *
 * The layout is pnpm's strictest, so that a package finds only what its package.json declares:
 * nothing is hoisted, and the packages live in a folder beside the project, not in its
 * `node_modules`, so that a package's lookup never reaches the project's own dependencies. The
 * project depends on every tarball and on the peers they name (`npm i @lyre/core effect`, as
 * the README says), and installs no peer by itself.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pnpm, run } from "./commands.ts"
import { lockedPackages } from "./lockfile.ts"
import { startStoreRegistry, tarballManifest } from "./storeRegistry.ts"

interface WorkspaceInstall {
  readonly storeDir: string
  readonly registries: { readonly default: string }
}

export interface Installed {
  /** `name@version` of each package the store lacked, so that it came from the network. */
  readonly fetchedUpstream: ReadonlyArray<string>
}

export const installTarballs = async (options: {
  readonly workspace: string
  readonly tarballs: ReadonlyArray<string>
  readonly project: string
  /** Where pnpm puts the installed packages; beside the project, not inside it. */
  readonly packages: string
}): Promise<Installed> => {
  // pnpm writes this file as JSON, which YAML includes.
  const workspaceInstall = JSON.parse(
    readFileSync(join(options.workspace, "node_modules/.modules.yaml"), "utf8")
  ) as WorkspaceInstall
  const registry = await startStoreRegistry({
    locked: lockedPackages(join(options.workspace, "pnpm-lock.yaml")),
    tarballs: options.tarballs,
    upstream: workspaceInstall.registries.default
  })
  try {
    const manifests = options.tarballs.map(tarballManifest)
    const ours = new Set(manifests.map((manifest) => manifest.name))
    const peers = Object.fromEntries(
      manifests.flatMap((manifest) =>
        Object.entries((manifest["peerDependencies"] ?? {}) as Record<string, string>).filter(
          ([name]) => !ours.has(name)
        )
      )
    )
    const dependencies = { ...peers, ...Object.fromEntries(manifests.map((m) => [m.name, m.version])) }
    writeFileSync(
      join(options.project, "package.json"),
      JSON.stringify({ name: "lyre-consumer", private: true, type: "module", dependencies })
    )
    writeFileSync(
      join(options.project, ".npmrc"),
      [
        `registry=${registry.url}`,
        `store-dir=${workspaceInstall.storeDir}`,
        // The loopback registry's metadata is this run's alone.
        `cache-dir=${join(options.project, ".pnpm-cache")}`,
        `virtual-store-dir=${options.packages}`,
        "hoist=false",
        "auto-install-peers=false",
        // pnpm's default under CI is a frozen lockfile, and this project has none.
        "frozen-lockfile=false",
        "lockfile=false",
        "update-notifier=false",
        ""
      ].join("\n")
    )
    const [command, prefix] = pnpm()
    const result = await run(
      command,
      [...prefix, "install", "--ignore-scripts", "--reporter=append-only"],
      options.project
    )
    if (result.code !== 0)
      throw new Error(
        `pnpm install exited ${result.code}` +
          (registry.unknown.length > 0
            ? `; it asked for what the workspace's lockfile lacks: ${registry.unknown.join(", ")}`
            : "") +
          `\n${result.stdout}\n${result.stderr}`
      )
    return { fetchedUpstream: [...registry.fetchedUpstream] }
  } finally {
    await registry.close()
  }
}
