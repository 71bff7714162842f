import { defineConfig } from "vitest/config"
import type { TestProjectInlineConfiguration } from "vitest/config"
import LongestFirst from "./test/sequencer.ts"

/**
 * The suite in lanes, by folder (`packages/<package>/test/<lane>/`), each with only the global
 * setup it needs, so that one unit file starts no browser install, no database and no build:
 *
 * - unit: no server, process, browser or database; domain rules through Effect layers.
 * - sound: the engine's renders and listening, pure but CPU-heavy (FluidSynth for outside audio).
 * - service: the service in this process (real HTTP, PostgreSQL or PGlite, Redis or memory).
 * - process: spawned processes and faults (our own redis-server and PostgreSQL, HAProxy).
 * - browser: pages in headless Chromium.
 * - packaging: the published tarballs installed outside the workspace, and their licences.
 *
 * `pnpm test` runs every lane; `pnpm test:unit` (and `test:<lane>`) one.
 */
const lane = (
  name: string,
  globalSetup: ReadonlyArray<string> = [],
  options: { readonly isolate?: boolean } = {}
): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, include: [`packages/*/test/${name}/**/*.test.ts`], globalSetup: [...globalSetup], ...options }
})

export default defineConfig({
  test: {
    projects: [
      // Unit files hold no state beyond their own tests, so a worker imports core once for all of
      // them rather than once a file: a third of the lane's CPU.
      lane("unit", [], { isolate: false }),
      // The sound and service files, too, keep nothing in the modules they share (each starts and
      // closes its own servers, engines and databases), so a worker imports the service once
      // rather than once a file: about a tenth of the suite's time went to imports.
      lane("sound", ["test/fluidsynth.ts", "test/ffmpeg.ts", "test/debianMusic.ts"], { isolate: false }),
      lane("service", ["test/fluidsynth.ts", "test/databaseTemplate.ts"], { isolate: false }),
      lane("process", ["test/haproxy.ts", "test/faultServers.ts", "test/fluidsynth.ts", "test/databaseTemplate.ts"]),
      lane("browser", ["test/chromium.ts", "test/dashboardBuild.ts", "test/databaseTemplate.ts"]),
      lane("packaging")
    ],
    // Two cores: two forks keep the suite fast without starving the databases the tests talk to.
    pool: "forks",
    maxWorkers: 2,
    // Every lane in one pool, the longest files first (test/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for a browser or a server to catch up (a seek fetching audio, a page
    // rendering an answer); its default second is too short on a loaded two-core machine.
    expect: { poll: { timeout: 15_000 } }
  }
})
