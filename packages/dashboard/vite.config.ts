import { defineConfig } from "vite"

// Built at install time (this package's postinstall) into dist/, which the service serves under
// /dashboard: hashed assets, no CDN, nothing fetched at run time.
export default defineConfig({
  base: "/dashboard/",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2022", reportCompressedSize: false },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } }
})
