import { defineConfig } from "vitest/config"

// Two cores: two forks keep the suite fast without starving the databases the tests talk to.
export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    globalSetup: ["test/chromium.ts", "test/haproxy.ts", "test/faultServers.ts", "test/dashboardBuild.ts", "test/fluidsynth.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
