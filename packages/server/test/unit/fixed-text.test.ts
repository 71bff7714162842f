/**
 * A client with fixed texts must send what Effect's client sends: the same text and the same
 * parameters for every kind of template, nested statements and constants included, and the
 * client's own way for what it cannot place. Held to PostgreSQL's compiler, as the service runs.
 */
import { makeCompiler } from "@effect/sql-pg/PgClient"
import { Effect } from "effect"
import * as Statement from "effect/sql/Statement"
import { describe, expect, it } from "vitest"
import { fixedTextClient } from "@lyre/core"

const theirs = Statement.make(Effect.die("not connected"), makeCompiler(), [], undefined)
const ours = fixedTextClient(theirs)

/** One template call site, evaluated with `sql` as its client. */
const charge = (sql: Statement.Constructor, keyed: boolean, model: string, price: number) => {
  const work = sql`insert into tasks (id, model) select ${`gen_${model}`}, ${model} from debit returning id`
  const claim = keyed ? sql`, claim as (insert into keys (key) select ${"k1"} from work)` : sql``
  return sql`
    with debit as (update accounts set credits = credits - ${price} where id = ${"acc_1"} returning id),
    work as (${work})${claim},
    armed as (select ${sql.literal("a.credit_alert_armed and true")} as armed)
    select ${price}::int as price, exists (select 1 from work) as debited, ${null}::text as nothing`
}

const compiled = (statement: Statement.Statement<object>) => statement.compile()

describe("a client with fixed texts", () => {
  it("sends the text and parameters the client compiles, for each shape of a template", () => {
    for (const keyed of [false, true, false]) {
      for (const [model, price] of [
        ["aether", 50],
        ["echo", 100]
      ] as const) {
        expect(compiled(charge(ours, keyed, model, price))).toEqual(compiled(charge(theirs, keyed, model, price)))
      }
    }
  })

  it("hands over the same text on every call of a shape, so the driver finds it without hashing it again", () => {
    const [first] = compiled(charge(ours, true, "aether", 50))
    const [again] = compiled(charge(ours, true, "echo", 100))
    const [other] = compiled(charge(ours, false, "echo", 100))
    expect(again).toBe(first)
    expect(other).not.toBe(first)
  })

  it("leaves to the client what only it can place: an identifier, a list, a record", () => {
    const ids = ["a", "b"]
    const cases: ReadonlyArray<(sql: Statement.Constructor) => Statement.Statement<object>> = [
      (sql) => sql`select * from ${sql("tasks")} where id = ${"x"}`,
      (sql) => sql`select * from tasks where id in ${sql.in(ids)} and model = ${"aether"}`,
      (sql) => sql`insert into tasks ${sql.insert({ id: "a", model: "echo" })}`,
      // A nested statement of ours inside a template the client must place is rebuilt its way.
      (sql) => sql`select * from (${sql`select id from tasks where model = ${"echo"}`}) t where t.id in ${sql.in(ids)}`
    ]
    for (const make of cases) expect(compiled(make(ours))).toEqual(compiled(make(theirs)))
  })

  it("reads a statement of another such client nested in a template, as WriteSql's work is in a charge", () => {
    const writes = fixedTextClient(theirs)
    const nested = (sql: Statement.Constructor, inner: Statement.Constructor) =>
      sql`select ${"a"} as first, (${inner`select count(*) from tasks where model = ${"echo"}`}) as n, ${2}::int as last`
    expect(compiled(nested(ours, writes))).toEqual(compiled(nested(theirs, theirs)))
    const listed = (sql: Statement.Constructor, inner: Statement.Constructor) =>
      sql`select (${inner`select ${"x"}::text`}) as x from tasks where id in ${sql.in(["a"])}`
    expect(compiled(listed(ours, writes))).toEqual(compiled(listed(theirs, theirs)))
  })

  it("passes a call with a string (an identifier) to the client", () => {
    expect(ours("tasks")).toEqual(theirs("tasks"))
  })
})
