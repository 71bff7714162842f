/**
 * The provider and worker settings: defaults, fractions of a second for polls, the checks that
 * name their variable, and `pnpm worker` refusing what it cannot run on.
 */
import { Exit } from "effect"
import { describe, expect, it } from "vitest"
import { configFailureOf, loadConfigFrom } from "../support/config.ts"
import { spawnEntry } from "../support/processes.ts"

describe("provider and worker settings", () => {
  it("default to the embedded provider, 5 s polls, 10 s provider time-outs and 60 s leases", async () => {
    const exit = await loadConfigFrom({})
    expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
      provider: "embedded",
      providerUrl: null,
      providerApiKey: null,
      providerPollSeconds: 5,
      providerTimeoutSeconds: 10,
      workerLeaseSeconds: 60
    })
  })

  it("read PROVIDER=http with its URL and key, and fractional seconds", async () => {
    const exit = await loadConfigFrom({
      PROVIDER: "http",
      PROVIDER_URL: "https://api.example/",
      PROVIDER_API_KEY: "k",
      PROVIDER_POLL_SECONDS: "0.5",
      PROVIDER_TIMEOUT_SECONDS: "2.5",
      WORKER_LEASE_SECONDS: "30"
    })
    expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
      provider: "http",
      providerUrl: "https://api.example/",
      providerApiKey: "k",
      providerPollSeconds: 0.5,
      providerTimeoutSeconds: 2.5,
      workerLeaseSeconds: 30
    })
  })

  it("refuse PROVIDER=http without a URL or a key, and non-positive seconds", async () => {
    expect(await configFailureOf({ PROVIDER: "http", PROVIDER_API_KEY: "k" })).toContain("PROVIDER_URL")
    expect(await configFailureOf({ PROVIDER: "http", PROVIDER_URL: "ftp://x", PROVIDER_API_KEY: "k" })).toContain(
      "PROVIDER_URL"
    )
    expect(await configFailureOf({ PROVIDER: "http", PROVIDER_URL: "http://x" })).toContain("PROVIDER_API_KEY")
    expect(await configFailureOf({ PROVIDER: "engine-x" })).toContain("PROVIDER")
    expect(await configFailureOf({ PROVIDER_POLL_SECONDS: "0" })).toContain("PROVIDER_POLL_SECONDS")
    expect(await configFailureOf({ WORKER_LEASE_SECONDS: "soon" })).toContain("WORKER_LEASE_SECONDS")
  })

  it("pnpm worker refuses to start without DATABASE_URL, naming it", async () => {
    const worker = spawnEntry("worker-main", {
      DATABASE_URL: "",
      PROVIDER: "http",
      PROVIDER_URL: "http://127.0.0.1:9",
      PROVIDER_API_KEY: "k"
    })
    const code = await new Promise<number | null>((resolve) => worker.child.once("exit", resolve))
    expect(code).not.toBe(0)
    expect(worker.output()).toContain("DATABASE_URL")
  })
})
