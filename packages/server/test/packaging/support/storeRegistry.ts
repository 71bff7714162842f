/**
 * A registry on loopback for installing the packed tarballs outside the workspace with nothing
 * from the network: it lists our packages from their tarballs, exactly as packed, and every
 * other package at the versions the workspace's lockfile holds, with the lockfile's integrity.
 * pnpm finds a package of that integrity in its content-addressed store, which the workspace's
 * `pnpm install` filled, and asks for no tarball; one the store lacks is fetched from the
 * workspace's registry and named in `fetchedUpstream`. A package the lockfile does not hold is
 * answered 404 and named in `unknown`.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import { gunzipSync } from "node:zlib"
import type { LockedVersion } from "./lockfile.ts"

export interface Manifest {
  readonly name: string
  readonly version: string
  readonly [field: string]: unknown
}

/** `package/package.json` of an npm tarball (a gzipped ustar archive). */
export const tarballManifest = (file: string): Manifest => {
  const archive = gunzipSync(readFileSync(file))
  for (let at = 0; at + 512 <= archive.length; ) {
    const header = archive.subarray(at, at + 512)
    const field = (from: number, to: number) => header.toString("utf8", from, to).replace(/\0.*$/s, "")
    const name = field(0, 100)
    if (name === "") break
    const size = Number.parseInt(field(124, 136).trim() || "0", 8)
    const path = [field(345, 500), name].filter((part) => part !== "").join("/")
    if (path === "package/package.json")
      return JSON.parse(archive.toString("utf8", at + 512, at + 512 + size)) as Manifest
    at += 512 + Math.ceil(size / 512) * 512
  }
  throw new Error(`${file} holds no package/package.json`)
}

/** Release versions above prereleases, then by their numbers. */
const newer = (a: string, b: string): number => {
  const [mainA = "", preA] = a.split("-", 2)
  const [mainB = "", preB] = b.split("-", 2)
  const numbersA = mainA.split(".").map(Number)
  const numbersB = mainB.split(".").map(Number)
  for (let i = 0; i < 3; i++) {
    const difference = (numbersA[i] ?? 0) - (numbersB[i] ?? 0)
    if (difference !== 0) return difference
  }
  return (preA === undefined ? 1 : 0) - (preB === undefined ? 1 : 0)
}

export interface StoreRegistry {
  /** With a trailing slash, as `.npmrc` wants it. */
  readonly url: string
  /** `name@version` of each tarball fetched from the workspace's registry because the store lacked it. */
  readonly fetchedUpstream: ReadonlyArray<string>
  /** Each name asked for that neither our tarballs nor the lockfile hold. */
  readonly unknown: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const startStoreRegistry = async (options: {
  readonly locked: ReadonlyMap<string, ReadonlyMap<string, LockedVersion>>
  /** Our packed tarballs. */
  readonly tarballs: ReadonlyArray<string>
  /** The registry the workspace installs from, with a trailing slash. */
  readonly upstream: string
}): Promise<StoreRegistry> => {
  const fetchedUpstream: Array<string> = []
  const unknown: Array<string> = []
  const own = new Map(
    options.tarballs.map((file) => {
      const bytes = readFileSync(file)
      const manifest = tarballManifest(file)
      return [
        manifest.name,
        {
          manifest,
          bytes,
          integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
          shasum: createHash("sha1").update(bytes).digest("hex")
        }
      ] as const
    })
  )

  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const tarballUrl = (name: string, version: string) =>
    `${url}${name}/-/${name.replace(/^@[^/]+\//, "")}-${version}.tgz`

  const packument = (name: string): object | null => {
    const ours = own.get(name)
    if (ours !== undefined) {
      const { version } = ours.manifest
      return {
        name,
        "dist-tags": { latest: version },
        versions: {
          [version]: {
            ...ours.manifest,
            dist: { tarball: tarballUrl(name, version), integrity: ours.integrity, shasum: ours.shasum }
          }
        }
      }
    }
    const versions = options.locked.get(name)
    if (versions === undefined) return null
    const listed = [...versions.values()]
    return {
      name,
      "dist-tags": {
        latest: listed
          .map((v) => v.version)
          .sort(newer)
          .at(-1)
      },
      versions: Object.fromEntries(
        listed.map((v) => [
          v.version,
          {
            name,
            version: v.version,
            // As the registry has it: an optional dependency is listed among the dependencies too.
            dependencies: { ...v.dependencies, ...v.optionalDependencies },
            optionalDependencies: v.optionalDependencies,
            peerDependencies: v.peerDependencies,
            peerDependenciesMeta: v.peerDependenciesMeta,
            ...v.platform,
            dist: { tarball: tarballUrl(name, v.version), integrity: v.integrity }
          }
        ])
      )
    }
  }

  server.on("request", (req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? "/", url).pathname.slice(1))
      const [name = "", file] = path.split("/-/", 2)
      if (file === undefined) {
        const body = packument(name)
        if (body === null) unknown.push(name)
        res.writeHead(body === null ? 404 : 200, { "content-type": "application/json" })
        res.end(JSON.stringify(body ?? { error: "not found" }))
        return
      }
      const ours = own.get(name)
      if (ours !== undefined) {
        res.writeHead(200, { "content-type": "application/octet-stream" })
        res.end(ours.bytes)
        return
      }
      const version = file.replace(/\.tgz$/, "").slice(name.replace(/^@[^/]+\//, "").length + 1)
      if (options.locked.get(name)?.get(version) === undefined) {
        unknown.push(`${name}@${version}`)
        res.writeHead(404).end()
        return
      }
      fetchedUpstream.push(`${name}@${version}`)
      const upstream = await fetch(`${options.upstream}${name}/-/${file}`)
      res.writeHead(upstream.status, { "content-type": "application/octet-stream" })
      if (upstream.body === null) res.end()
      else Readable.fromWeb(upstream.body).pipe(res)
    })().catch((error: unknown) => {
      res.writeHead(502).end(String(error))
    })
  })

  return {
    url,
    fetchedUpstream,
    unknown,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
