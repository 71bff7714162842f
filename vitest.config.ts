import { defineConfig } from "vitest/config"

// Two cores: two forks keep the suite fast without starving the databases the tests talk to.
export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    globalSetup: [
      "test/chromium.ts",
      "test/haproxy.ts",
      "test/faultServers.ts",
      "test/dashboardBuild.ts",
      "test/fluidsynth.ts"
    ],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for a browser or a server to catch up (a seek fetching audio, a page
    // rendering an answer); its default second is too short on a loaded two-core machine.
    expect: { poll: { timeout: 15_000 } }
  }
})
