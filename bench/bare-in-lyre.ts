/**
 * A developer's aid for `profile-api.ts` (`PROFILE_ENTRY=bench/bare-in-lyre.ts`): the bare
 * handler of `bare-server.ts`, measured inside a process that also runs the whole of Lyre. Lyre
 * starts first on a port of its own and takes a few seconds of GET /v1/me, GET of a task and
 * create (SIDE_SECONDS each, default 4), as a serving process would have; then the bare handler
 * starts listening on PORT and alone takes the measured load.
 *
 * The bare handler's code and statements are the same in both places, so the difference
 * between it here and in a process of its own is what being one process with Lyre costs the
 * same request (decision 0105), and Lyre against it here is what Lyre's request path adds.
 * PostgreSQL + Redis only: the embedded database cannot be opened twice.
 */
import { freePort, loadPerConnection } from "./support.ts"
import { adminOf, createAccountKeys, createTaskToRead, endpoints, requestsOf, waitUntilAnswering } from "./service.ts"

if (process.env["DATABASE_URL"] === undefined) {
  process.stderr.write("bare-in-lyre: PostgreSQL only (DATABASE_URL); the embedded database cannot be opened twice\n")
  process.exit(2)
}
const barePort = process.env["PORT"] ?? "8090"
const sidePort = await freePort()
process.env["PORT"] = String(sidePort)
await import("../packages/server/src/main.ts")
const side = `http://127.0.0.1:${sidePort}`
await waitUntilAnswering(side, "/readyz")
// Accounts of their own: the bench's (`bench-N@example.test`) are already in the database.
const keys = await createAccountKeys(adminOf(side, process.env["ADMIN_TOKEN"] ?? ""), 8, ["music:generate"], "side")
const requests = requestsOf(keys, await createTaskToRead(side, keys[0] ?? ""))
const seconds = Number(process.env["SIDE_SECONDS"] ?? "4")
let failed = 0
for (const endpoint of endpoints) {
  // Creates at a bounded rate: each is a submission to the fake upstream.
  const overallRate = endpoint === "POST create" ? 200 : undefined
  const result = await loadPerConnection(side, { connections: 8, duration: seconds, overallRate }, requests[endpoint])
  failed += result.non2xx + result.errors
}
process.stderr.write(`bare-in-lyre: Lyre's side warm-up done, ${failed} requests failed\n`)
// The bare handler listens only now: whoever waits for its port waits for a process that has served Lyre.
process.env["PORT"] = barePort
await import("./bare-server.ts")
