/**
 * REST answers held to their output schemas (`CHECK_ANSWERS`, as every test server runs), and
 * sent as rendered without it (decision 0109).
 */
import { TRPCError } from "@trpc/server"
import { afterEach, describe, expect, it, vi } from "vitest"
import { Account } from "../../src/domain/models.ts"
import { procedureTable } from "../../src/trpc/router.ts"
import { answerOf, checkedAnswer } from "../../src/trpc/procedures.ts"

const account = {
  id: "acct_1",
  plan: "pro",
  credits: { subscription: 100, onetime: 5, total: 105 },
  rate_limits: { requests_per_minute: 60, concurrent_generations: 10 },
  auth: { kind: "api_key", scopes: ["music:read"], key: { id: "key_1", name: "ci", expires_at: null } }
}

const check = checkedAnswer("me", (value) => Account.parse(value))

/** The failure tRPC's own output step raises: rendered as a 500 `internal_error`. */
const refusal = async (value: unknown) => {
  const failure: unknown = await check(value).then(
    () => null,
    (error: unknown) => error
  )
  expect(failure).toBeInstanceOf(TRPCError)
  return failure as TRPCError
}

describe("answers held to their schemas", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("pass an answer the schema leaves unchanged, as the same value", async () => {
    expect(await check(account)).toBe(account)
  })

  it("refuse, logging what differs, an answer whose keys are out of the schema's order", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined)
    const { plan, id, ...rest } = account
    const failure = await refusal({ plan, id, ...rest })
    expect(failure.code).toBe("INTERNAL_SERVER_ERROR")
    expect(failure.message).toBe("Output validation failed")
    expect(String(logged.mock.calls[0]?.[0])).toContain("answer changed by its schema")
  })

  it("refuse an answer with a field the schema does not declare", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined)
    const failure = await refusal({ ...account, key_hash: "secret" })
    expect(String(failure.cause)).toContain("key_hash")
  })

  it("refuse an answer the schema does not accept", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined)
    await refusal({ ...account, credits: { subscription: 1.5, onetime: 0, total: 1.5 } })
    expect(String(logged.mock.calls[0]?.[0])).toContain("answer refused by its schema")
  })

  it("send a procedure's answer as its resolver rendered it when not checking", () => {
    const unchecked = answerOf("me", procedureTable.me.parts, { checkAnswers: false })
    const rendered = { ...account, extra: true }
    expect(unchecked(rendered)).toBe(rendered)
    const checked = answerOf("me", procedureTable.me.parts, { checkAnswers: true })
    expect(checked(account)).toBeInstanceOf(Promise)
  })
})
