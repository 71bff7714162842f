/**
 * Vitest's global setup: the fault tests run a `redis-server` and a PostgreSQL cluster of their
 * own (`initdb`, `pg_ctl`), which a fresh machine of this kind has not got until the project
 * installs Debian's packages (see debianPackage.ts).
 */
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { ensureDebianPackage } from "./debianPackage.ts"

const onPath = (name: string): boolean =>
  (process.env["PATH"] ?? "").split(":").some((dir) => dir !== "" && existsSync(join(dir, name)))

const postgresRoot = "/usr/lib/postgresql"

/** Where support/faults.ts looks: any version under /usr/lib/postgresql, or `initdb` on the PATH. */
const hasInitdb = (): boolean =>
  (existsSync(postgresRoot) &&
    readdirSync(postgresRoot).some((v) => existsSync(join(postgresRoot, v, "bin", "initdb")))) ||
  onPath("initdb")

export default function ensureFaultServers(): void {
  ensureDebianPackage({
    path: "/usr/bin/redis-server",
    present: () => onPath("redis-server"),
    pkg: "redis-server",
    variable: "PATH",
    binary: "include a directory with redis-server",
    need: "The Redis fault tests need redis-server",
    tests: "the Redis fault tests"
  })
  ensureDebianPackage({
    path: `${postgresRoot}/<version>/bin/initdb`,
    present: hasInitdb,
    pkg: "postgresql",
    variable: "PATH",
    binary: "include a directory with PostgreSQL's initdb and pg_ctl",
    need: "The PostgreSQL fault tests need PostgreSQL's initdb",
    tests: "the PostgreSQL fault tests"
  })
}
