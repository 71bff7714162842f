import { Agent } from "node:http"
import { urlToHttpOptions } from "node:url"
import { describe, expect, it } from "vitest"
import { requestOptionsOf } from "../../src/provider/upstreamAgents.ts"

/** The fields of node's own `urlToHttpOptions` that node:http reads to send a request. */
const nodeTarget = (url: URL) => {
  const options = urlToHttpOptions(url)
  return {
    protocol: options.protocol,
    hostname: options.hostname,
    port: options.port,
    path: options.path,
    auth: options.auth
  }
}

describe("an upstream request's options", () => {
  const agent = new Agent()

  it.each([
    "http://127.0.0.1:8080/api/v1/generate/record-info?taskId=abc%20d",
    "https://files.example.com/audio/0.mp3",
    "http://[::1]:9000/x/y.png?sig=a&exp=1",
    "https://user:p%40ss@cdn.example.com:8443/a%2Fb/c.mp3",
    "http://example.com",
    "http://example.com/path#fragment"
  ])("reads %s as node's urlToHttpOptions does", (text) => {
    const url = new URL(text)
    const options = requestOptionsOf(url, agent, "GET")
    expect({
      protocol: options.protocol,
      hostname: options.hostname,
      port: options.port,
      path: options.path,
      auth: options.auth
    }).toEqual(nodeTarget(url))
  })

  it("carries the method, the agent and the headers, and no field of the URL node does not read", () => {
    const options = requestOptionsOf(new URL("http://h:1/p?q=1"), agent, "POST", { "content-type": "application/json" })
    expect(options.method).toBe("POST")
    expect(options.agent).toBe(agent)
    expect(options.headers).toEqual({ "content-type": "application/json" })
    expect(Object.getPrototypeOf(options)).toBe(Object.prototype)
    expect(Object.keys(options).sort()).toEqual(["agent", "headers", "hostname", "method", "path", "port", "protocol"])
  })
})
