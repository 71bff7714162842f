import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, startTestServer } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"

let server: TestServer
let doc: Json
beforeAll(async () => {
  server = await startTestServer()
  const res = await api(server, "GET", "/api/openapi.json")
  expect(res.status).toBe(200)
  doc = res.body
})
afterAll(() => server.close())

const operation = (path: string, method: string): Json => {
  const op = doc.paths?.[path]?.[method]
  if (op === undefined) throw new Error(`no ${method} ${path}`)
  return op
}

describe("GET /api/openapi.json", () => {
  it("is OpenAPI 3.1, version 0.1.0, served at base_url", () => {
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info?.version).toBe("0.1.0")
    expect((doc.servers as unknown as Array<Json>)[0]?.url).toBe(`${server.url}/api`)
  })

  it("documents the interface's operations, the song tools, the tasks on a track, personas and lyrics, and nothing else", () => {
    expect(Object.keys(doc.paths ?? {}).sort()).toEqual([
      "/v1/lyrics",
      "/v1/lyrics/{id}",
      "/v1/me",
      "/v1/music/exports",
      "/v1/music/exports/{id}",
      "/v1/music/generations",
      "/v1/music/generations/{id}",
      "/v1/music/tracks/{track_id}/covers",
      "/v1/music/tracks/{track_id}/edits",
      "/v1/music/tracks/{track_id}/exports",
      "/v1/music/tracks/{track_id}/extensions",
      "/v1/music/tracks/{track_id}/instrumentals",
      "/v1/music/tracks/{track_id}/vocals",
      "/v1/music/uploads",
      "/v1/music/uploads/{id}",
      "/v1/personas",
      "/v1/personas/{id}"
    ])
    expect(Object.keys(doc.paths?.["/v1/music/generations"] ?? {}).sort()).toEqual(["get", "post"])
  })

  it("create answers 202 and lists 400, 401, 402, 403, 429, 500, 503 in the envelope", () => {
    const responses = operation("/v1/music/generations", "post").responses ?? {}
    expect(Object.keys(responses).sort()).toEqual(["202", "400", "401", "402", "403", "429", "500", "503"])
    expect(responses["429"]?.headers?.["Retry-After"]).toBeDefined()
    expect(responses["503"]?.headers?.["Retry-After"]).toBeDefined()
    expect(responses["401"]?.headers?.["WWW-Authenticate"]).toBeDefined()
    expect(responses["400"]?.content?.["application/json"]?.schema?.$ref).toBe("#/components/schemas/Error")
    expect(responses["202"]?.headers?.["X-RateLimit-Limit"]).toBeDefined()
  })

  it("an upload's body is the file itself or a multipart form, and 413 is listed", () => {
    const post = operation("/v1/music/uploads", "post")
    const content = post.requestBody && "content" in post.requestBody ? post.requestBody.content : {}
    expect(Object.keys(content).sort()).toEqual([
      "audio/flac",
      "audio/mpeg",
      "audio/ogg",
      "audio/wav",
      "multipart/form-data"
    ])
    expect(content["audio/mpeg"]?.schema).toEqual({ type: "string", format: "binary" })
    const form = content["multipart/form-data"]?.schema
    expect(form && "required" in form ? form.required : undefined).toEqual(["file"])
    expect(Object.keys(post.responses ?? {}).sort()).toEqual(["202", "400", "401", "403", "413", "429", "500", "503"])
    const parameters = (post.parameters ?? []) as unknown as Array<Json>
    expect(parameters.map((p) => [p.name, p.in])).toContainEqual(["Idempotency-Key", "header"])
    expect(Object.keys(doc.paths?.["/v1/music/uploads/{id}"] ?? {}).sort()).toEqual(["delete", "get"])
  })

  it("get lists 401, 403, 404; me lists 401, 403, 429", () => {
    const get = operation("/v1/music/generations/{id}", "get").responses ?? {}
    for (const status of ["200", "401", "403", "404"]) expect(get[status]).toBeDefined()
    const me = operation("/v1/me", "get").responses ?? {}
    for (const status of ["200", "401", "403", "429"]) expect(me[status]).toBeDefined()
  })

  it("describes the request body with its limits, strictness and defaults, and marks nocturne deprecated", () => {
    const schema = operation("/v1/music/generations", "post").requestBody?.content?.["application/json"]?.schema ?? {}
    const properties = schema.properties ?? {}
    expect(schema.additionalProperties).toBe(false)
    expect((schema.required as unknown as Array<string>).sort()).toEqual(["style", "title"])
    expect(properties.style?.maxLength).toBe(1000)
    expect(properties.style?.minLength).toBe(1)
    expect(properties.title?.maxLength).toBe(200)
    expect(properties.lyrics?.maxLength).toBe(5000)
    expect(properties.negative_tags?.maxLength).toBe(500)
    expect(properties.style_weight?.minimum).toBe(0)
    expect(properties.style_weight?.maximum).toBe(1)
    expect(properties.model?.default).toBe("aether")
    expect(properties.instrumental?.default).toBe(false)
    const nocturne = ((properties.model?.anyOf ?? []) as unknown as Array<Json>).find(
      (v) => String(v.const) === "nocturne"
    )
    expect(nocturne?.deprecated).toBe(true)
  })

  it("has the error envelope as a component with the interface's types", () => {
    const error = doc.components?.schemas?.Error?.properties?.error
    expect(error?.required).toEqual(expect.arrayContaining(["type", "code", "message"]))
    expect(error?.properties?.type?.enum).toEqual([
      "invalid_request_error",
      "authentication_error",
      "permission_error",
      "insufficient_credits",
      "rate_limit_error",
      "not_found",
      "api_error",
      "service_unavailable"
    ])
  })

  it("declares the bearer scheme and music:generate on the generation operations", () => {
    expect(doc.components?.securitySchemes?.bearer?.scheme).toBe("bearer")
    expect(operation("/v1/music/generations", "post").security).toEqual([
      { bearer: ["music:generate"] },
      { oauth2: ["music:generate"] }
    ])
  })

  it("declares the OAuth authorization code flow with the real endpoints and every scope in words", () => {
    const flow = doc.components?.securitySchemes?.oauth2?.flows?.authorizationCode
    expect(doc.components?.securitySchemes?.oauth2?.type).toBe("oauth2")
    expect(flow?.authorizationUrl).toBe(`${server.url}/oauth/authorize`)
    expect(flow?.tokenUrl).toBe(`${server.url}/oauth/token`)
    expect(Object.keys(flow?.scopes ?? {}).sort()).toEqual([
      "livecoding:agent",
      "lyrics:agent",
      "music:agent",
      "music:generate",
      "profile"
    ])
    for (const description of Object.values(flow?.scopes ?? {})) expect(typeof description).toBe("string")
    expect(operation("/v1/me", "get").security).toEqual([{ bearer: [] }, { oauth2: [] }])
    for (const [path, method] of [
      ["/v1/music/generations/{id}", "get"],
      ["/v1/music/generations", "get"]
    ] as const) {
      expect(operation(path, method).security).toEqual([{ bearer: ["music:generate"] }, { oauth2: ["music:generate"] }])
    }
  })

  describe("song tools", () => {
    it("extensions: 202 GenerationTask, track_id in the path, Idempotency-Key, every error status", () => {
      const op = operation("/v1/music/tracks/{track_id}/extensions", "post")
      expect(Object.keys(op.responses ?? {}).sort()).toEqual([
        "202",
        "400",
        "401",
        "402",
        "403",
        "404",
        "429",
        "500",
        "503"
      ])
      const parameters = op.parameters as unknown as Array<Json>
      expect(parameters.map((p) => [p.name, p.in])).toEqual(
        expect.arrayContaining([
          ["track_id", "path"],
          ["Idempotency-Key", "header"]
        ])
      )
      const schema = op.requestBody?.content?.["application/json"]?.schema ?? {}
      expect(schema.additionalProperties).toBe(false)
      expect(Object.keys(schema.properties ?? {})).toEqual(
        expect.arrayContaining(["continue_at", "style", "lyrics", "model"])
      )
      expect(schema.required).toBeUndefined()
      expect(op.security).toEqual([{ bearer: ["music:generate"] }, { oauth2: ["music:generate"] }])
    })

    it("exports: 202 a new Export or 200 the ready one, the format enum, every error status", () => {
      const op = operation("/v1/music/tracks/{track_id}/exports", "post")
      expect(Object.keys(op.responses ?? {}).sort()).toEqual([
        "200",
        "202",
        "400",
        "401",
        "402",
        "403",
        "404",
        "429",
        "500",
        "503"
      ])
      const schema = op.requestBody?.content?.["application/json"]?.schema ?? {}
      expect(schema.properties?.format?.enum).toEqual(["wav", "midi", "stems", "timed_lyrics"])
      expect(schema.required).toEqual(["format"])
      const exported = op.responses?.["202"]?.content?.["application/json"]?.schema ?? {}
      expect(Object.keys(exported.properties ?? {}).sort()).toEqual([
        "created_at",
        "credits_refunded",
        "credits_used",
        "error",
        "files",
        "format",
        "id",
        "status",
        "task_id",
        "timed_lyrics",
        "track_id",
        "updated_at"
      ])
    })

    it("get and list of exports: 200, 401, 403, 404 (get), 400 (list), 503 (the database out of reach)", () => {
      expect(Object.keys(operation("/v1/music/exports/{id}", "get").responses ?? {}).sort()).toEqual([
        "200",
        "401",
        "403",
        "404",
        "429",
        "500",
        "503"
      ])
      const list = operation("/v1/music/exports", "get")
      expect(Object.keys(list.responses ?? {}).sort()).toEqual(["200", "400", "401", "403", "429", "500", "503"])
      expect((list.parameters as unknown as Array<Json>).map((p) => p.name).sort()).toEqual([
        "limit",
        "starting_after",
        "track_id"
      ])
    })
  })
})
