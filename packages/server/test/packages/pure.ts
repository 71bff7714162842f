/**
 * Run in a project that installed the packed tarballs (packages.test.ts): core as a library,
 * with no database. Prints what it loaded and computed as one JSON line.
 */
import { registerHooks } from "node:module"

const loaded: Array<string> = []
registerHooks({
  resolve: (specifier, context, nextResolve) => {
    const resolved = nextResolve(specifier, context)
    loaded.push(resolved.url)
    return resolved
  }
})

const schemas = await import("@lyre/core/schemas")
const loadedBySchemas = [...loaded]
const core = await import("@lyre/core")

const valid = core.validateGenerateRequest({ style: "synthwave", title: "Night Drive", lyrics: "Neon", model: "echo" })
const crossField = schemas.validateGenerateRequest({
  style: "synthwave",
  title: "Night Drive",
  lyrics: "x",
  model: "echo",
  style_weight: 0.5
})
const missing = schemas.validateGenerateRequest({ style: "synthwave", title: "Night Drive" })

process.stdout.write(
  `${JSON.stringify({
    loadedBySchemas,
    loaded,
    valid: valid.ok ? { value: valid.value, price: core.priceOf[valid.value.model] } : null,
    crossField: crossField.ok ? null : schemas.renderError(crossField.error),
    missing: missing.ok ? null : schemas.renderError(missing.error),
    prices: schemas.priceOf
  })}\n`
)
