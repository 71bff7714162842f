/**
 * The third-party packages of the workspace's `pnpm-lock.yaml` (format 9), as a registry would
 * describe them: each version's integrity (the key pnpm's store files it under), its platform
 * and peers, and the versions it depends on as the workspace resolved them.
 */
import { readFileSync } from "node:fs"
import { parse } from "yaml"

type Yaml = string | boolean | number | null | ReadonlyArray<Yaml> | { readonly [key: string]: Yaml }

/** One version of a package as the registry would list it, with what it needs as the lockfile resolved it. */
export interface LockedVersion {
  readonly name: string
  readonly version: string
  readonly integrity: string
  readonly dependencies: Readonly<Record<string, string>>
  readonly optionalDependencies: Readonly<Record<string, string>>
  readonly peerDependencies: Readonly<Record<string, string>>
  readonly peerDependenciesMeta: Readonly<Record<string, unknown>>
  readonly platform: Readonly<Record<string, unknown>>
}

const record = (value: Yaml | undefined): { readonly [key: string]: Yaml } =>
  value === undefined || value === null || typeof value !== "object" || Array.isArray(value)
    ? {}
    : (value as { readonly [key: string]: Yaml })

/** `name@version` split at the `@` that starts the version (a scope's `@` is not it). */
const splitKey = (key: string): [string, string] => {
  const at = key.indexOf("@", 1)
  return [key.slice(0, at), key.slice(at + 1)]
}

/**
 * A dependency as a snapshot resolved it: `1.2.3(peer@4)` is `1.2.3`; an alias `other@1.2.3`
 * (`npm:` in a manifest) stays an alias.
 */
const resolvedSpec = (value: Yaml): string => {
  const plain = String(value).replace(/\(.*$/, "")
  return /^[^\d]/.test(plain) && plain.includes("@") ? `npm:${plain}` : plain
}

/** Every registry package of the lockfile, by name and version. */
export const lockedPackages = (path: string): ReadonlyMap<string, ReadonlyMap<string, LockedVersion>> => {
  const lockfile = record(parse(readFileSync(path, "utf8")) as Yaml)
  if (lockfile["lockfileVersion"] !== "9.0")
    throw new Error(`${path}: lockfile format ${String(lockfile["lockfileVersion"])}, this reader knows 9.0`)
  // A snapshot per set of peers a version was resolved with; their dependencies other than peers agree.
  const resolved = new Map<string, { dependencies: Record<string, string>; optional: Record<string, string> }>()
  for (const [key, snapshot] of Object.entries(record(lockfile["snapshots"]))) {
    const id = key.replace(/\(.*$/, "")
    const entry = resolved.get(id) ?? { dependencies: {}, optional: {} }
    for (const [name, value] of Object.entries(record(record(snapshot)["dependencies"])))
      entry.dependencies[name] = resolvedSpec(value)
    for (const [name, value] of Object.entries(record(record(snapshot)["optionalDependencies"])))
      entry.optional[name] = resolvedSpec(value)
    resolved.set(id, entry)
  }
  const packages = new Map<string, Map<string, LockedVersion>>()
  for (const [key, value] of Object.entries(record(lockfile["packages"]))) {
    const entry = record(value)
    const integrity = record(entry["resolution"])["integrity"]
    // A package from a git host or a plain URL is not the registry's to describe.
    if (typeof integrity !== "string" || record(entry["resolution"])["tarball"] !== undefined) continue
    const [name, version] = splitKey(key)
    const peers = record(entry["peerDependencies"]) as Readonly<Record<string, string>>
    // A resolved peer is listed among a snapshot's dependencies; the registry names it a peer only.
    const notPeer = (spec: Record<string, string>) =>
      Object.fromEntries(Object.entries(spec).filter(([dependency]) => peers[dependency] === undefined))
    const snapshot = resolved.get(key) ?? { dependencies: {}, optional: {} }
    const platform = Object.fromEntries(
      ["os", "cpu", "libc", "engines"].flatMap((field) => (entry[field] === undefined ? [] : [[field, entry[field]]]))
    )
    const versions = packages.get(name) ?? new Map<string, LockedVersion>()
    versions.set(version, {
      name,
      version,
      integrity,
      dependencies: notPeer(snapshot.dependencies),
      optionalDependencies: notPeer(snapshot.optional),
      peerDependencies: peers,
      peerDependenciesMeta: record(entry["peerDependenciesMeta"]),
      platform
    })
    packages.set(name, versions)
  }
  return packages
}
