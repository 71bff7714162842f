/**
 * The procedures of the interface as parts: the base procedure's stage (the admission, and for a
 * change the unread body judged after it), the metadata REST routes by, the input and output
 * schemas and the resolver. `query` and `mutation` build the tRPC procedure from the parts, and
 * the router is made of those; REST calls the same parts itself (`restCallOf`), in the order
 * tRPC's chain runs them and failing as its steps fail, so a route costs neither the chain's
 * step and options object per middleware nor the output's parse (decisions 0108, 0109). Both
 * surfaces come from this one table, built with tRPC's public builder alone.
 */
import { TRPCError } from "@trpc/server"
import type { AnyTRPCProcedure } from "@trpc/server"
import type { z } from "zod"
import type { Principal } from "../domain/principal.ts"
import type { CallContext } from "./context.ts"
import { bases } from "./init.ts"
import type { LyreMeta, Stage } from "./init.ts"

/** What a resolver reads: the call's context, with the principal its stage admitted. */
export type AdmittedContext = CallContext & { readonly principal: Principal }

/** A procedure's parts, as REST calls them. */
export interface ProcedureParts {
  readonly type: "query" | "mutation"
  readonly stage: Stage
  readonly meta: LyreMeta
  readonly input: z.ZodType
  readonly output: z.ZodType
  readonly resolve: (ctx: AdmittedContext, input: unknown) => unknown
}

/** A procedure of the table: its parts, and the tRPC procedure built from them. */
export interface TableProcedure<P extends AnyTRPCProcedure = AnyTRPCProcedure> {
  readonly parts: ProcedureParts
  readonly procedure: P
}

interface Definition<I extends z.ZodType, O extends z.ZodType> {
  readonly meta: LyreMeta
  readonly input: I
  readonly output: O
  readonly resolve: (ctx: AdmittedContext, input: z.output<I>) => z.input<O> | Promise<z.input<O>>
}

/** A query on `base`: the tRPC procedure of its parts, and the parts. */
export const query = <I extends z.ZodType, O extends z.ZodType>(
  base: keyof typeof bases,
  definition: Definition<I, O>
) => {
  const procedure = bases[base].procedure
    .meta(definition.meta)
    .input(definition.input)
    .output(definition.output)
    // tRPC names the answer's type for a generic schema in terms it cannot relate to zod's
    // `z.input<O>` until `O` is known; `definition` holds the resolver to that type.
    .query(({ ctx, input }) => definition.resolve(ctx, input as z.output<I>) as never)
  return tableProcedure("query", base, definition, procedure)
}

/** A mutation on `base`: the tRPC procedure of its parts, and the parts. */
export const mutation = <I extends z.ZodType, O extends z.ZodType>(
  base: keyof typeof bases,
  definition: Definition<I, O>
) => {
  const procedure = bases[base].procedure
    .meta(definition.meta)
    .input(definition.input)
    .output(definition.output)
    // tRPC names the answer's type for a generic schema in terms it cannot relate to zod's
    // `z.input<O>` until `O` is known; `definition` holds the resolver to that type.
    .mutation(({ ctx, input }) => definition.resolve(ctx, input as z.output<I>) as never)
  return tableProcedure("mutation", base, definition, procedure)
}

const tableProcedure = <I extends z.ZodType, O extends z.ZodType, P extends AnyTRPCProcedure>(
  type: "query" | "mutation",
  base: keyof typeof bases,
  definition: Definition<I, O>,
  procedure: P
): TableProcedure<P> => ({
  parts: {
    type,
    stage: bases[base].stage,
    meta: definition.meta,
    input: definition.input,
    output: definition.output,
    // The parse that `input` went through gave it the schema's output type.
    resolve: (ctx, input) => definition.resolve(ctx, input as z.output<I>)
  },
  procedure
})

/** Procedures by name, nested as the router nests them. */
export interface ProcedureTree {
  readonly [name: string]: TableProcedure | ProcedureTree
}

/** The tRPC procedures of a tree, nested the same way: a router's record (tRPC takes plain objects as sub-routers). */
export type TrpcRecordOf<T extends ProcedureTree> = {
  readonly [K in keyof T]: T[K] extends TableProcedure<infer P>
    ? P
    : T[K] extends ProcedureTree
      ? TrpcRecordOf<T[K]>
      : never
}

const isTableProcedure = (node: TableProcedure | ProcedureTree): node is TableProcedure =>
  "parts" in node && "procedure" in node && typeof node.procedure === "function"

export const trpcRecordOf = <T extends ProcedureTree>(tree: T): TrpcRecordOf<T> => {
  const record: Record<string, unknown> = {}
  for (const [name, node] of Object.entries(tree))
    record[name] = isTableProcedure(node) ? node.procedure : trpcRecordOf(node)
  // Each entry is the same tree's node mapped as the type maps it.
  return record as TrpcRecordOf<T>
}

/** Procedures built with tRPC's builder alone, nested as their paths (the dashboard's). */
export interface TrpcTree {
  readonly [name: string]: AnyTRPCProcedure | TrpcTree
}

/** Every procedure's path in a tree of either kind, as tRPC names it (`account.keys.list`). */
export const pathsOf = (tree: ProcedureTree | TrpcTree, prefix = ""): ReadonlyArray<string> =>
  Object.entries(tree).flatMap(([name, node]) =>
    typeof node === "function" || isTableProcedure(node) ? [`${prefix}${name}`] : pathsOf(node, `${prefix}${name}.`)
  )

/** Every procedure of a tree by its path as tRPC names it (`generations.create`). */
export const partsByPath = (tree: ProcedureTree, prefix = ""): ReadonlyArray<readonly [string, ProcedureParts]> =>
  Object.entries(tree).flatMap(([name, node]) =>
    isTableProcedure(node) ? [[`${prefix}${name}`, node.parts] as const] : partsByPath(node, `${prefix}${name}.`)
  )

/**
 * As tRPC parses with a zod schema: its synchronous parse, and from the first call that needs it
 * on, the asynchronous one (a refinement that answers a promise). A failure is zod's, with its issues.
 */
const parserOf = (schema: z.ZodType) => {
  let isAsync = false
  return (value: unknown): unknown => {
    if (!isAsync) {
      try {
        return schema.parse(value)
      } catch (cause) {
        if (typeof cause === "object" && cause !== null && "issues" in cause && Array.isArray(cause.issues)) throw cause
        isAsync = true
      }
    }
    return schema.parseAsync(value)
  }
}

/** Thrown as tRPC's output step throws: a 500 `internal_error` to the caller. */
const outputFailed = (cause: unknown) =>
  new TRPCError({ message: "Output validation failed", code: "INTERNAL_SERVER_ERROR", cause })

/**
 * The answer held to its schema: parsed, and the parse must change nothing a client would see
 * (a field the schema does not declare, a default it fills, a transform, a key out of the
 * schema's order). Either failure is the 500 of tRPC's output step, logged with what differs:
 * it is a defect of the resolver, meant to be found by the tests (decision 0109).
 */
export const checkedAnswer = (path: string, parseOutput: (value: unknown) => unknown) => async (value: unknown) => {
  let parsed: unknown
  try {
    parsed = parseOutput(value)
    if (parsed instanceof Promise) parsed = await parsed
  } catch (cause) {
    console.error(JSON.stringify({ level: "error", msg: "answer refused by its schema", path, cause: String(cause) }))
    throw outputFailed(cause)
  }
  const sent = JSON.stringify(value)
  const schemas = JSON.stringify(parsed)
  if (sent === schemas) return value
  console.error(JSON.stringify({ level: "error", msg: "answer changed by its schema", path, sent, schemas }))
  throw outputFailed(new Error(`The answer of ${path} is not its output schema's: ${sent} became ${schemas}.`))
}

/** The answer of a procedure as it goes out: held to its output schema (tests, staging), or as rendered. */
export const answerOf = (path: string, parts: ProcedureParts, options: { readonly checkAnswers: boolean }) =>
  options.checkAnswers ? checkedAnswer(path, parserOf(parts.output)) : (value: unknown): unknown => value

/**
 * Calls the procedure at `path` for a context and the adapter's raw input: its stage, its input
 * parsed, its resolver with the stage's additions to the context, its answer; an input the
 * schema refuses is tRPC's BAD_REQUEST carrying zod's issues. A parser or resolver that answers
 * at once is not awaited: each await is a turn of the microtask queue.
 */
export const restCallOf = (path: string, parts: ProcedureParts, options: { readonly checkAnswers: boolean }) => {
  const parseInput = parserOf(parts.input)
  const answer = answerOf(path, parts, options)
  return async (ctx: CallContext, input: unknown): Promise<unknown> => {
    const added = await parts.stage(ctx, parts.meta, parts.type)
    let parsed: unknown
    try {
      parsed = parseInput(input)
      if (parsed instanceof Promise) parsed = await parsed
    } catch (cause) {
      throw new TRPCError({ code: "BAD_REQUEST", cause })
    }
    let data = parts.resolve({ ...ctx, ...added }, parsed)
    if (data instanceof Promise) data = await data
    const answered = answer(data)
    return answered instanceof Promise ? await answered : answered
  }
}
