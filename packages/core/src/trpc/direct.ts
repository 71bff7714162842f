/**
 * A procedure called the way tRPC's chain calls it, without the chain: its base procedure's
 * stage (the admission, and a change's body judged after it), then its input parsed, its
 * resolver, its answer, each failure the TRPCError tRPC would raise. tRPC's chain takes
 * an async step and a fresh options object for each of a procedure's four middlewares; on GET
 * /v1/me that was about 10 thousand of the request's 400 thousand instructions (decision 0108).
 *
 * Only procedures of the one shape every REST route has are called this way: a stage, one
 * input, an output, the resolver. `directProcedure` answers null for any other, and its caller
 * goes through tRPC.
 *
 * An answer is checked against its output schema only when `checkAnswers` is on, as the tests
 * run (decision 0109): there the schema must leave it unchanged, byte for byte as JSON, so what
 * production sends unparsed is what the parse would have sent.
 */
import type { AnyTRPCProcedure, AnyTRPCRouter } from "@trpc/server"
import { TRPCError } from "@trpc/server"
import { getParseFn } from "@trpc/server/unstable-core-do-not-import"
import type { CallContext } from "./context.ts"
import { stageOf } from "./init.ts"
import type { LyreMeta, Stage } from "./init.ts"

export interface DirectProcedure {
  readonly path: string
  readonly type: "query" | "mutation"
  readonly meta: LyreMeta | undefined
  readonly stage: Stage
  readonly parseInput: (raw: unknown) => unknown
  /** The resolver's answer as it goes out: held to the output schema, or as it is. */
  readonly answer: (value: unknown) => unknown
  readonly resolver: (opts: ResolverOptions) => unknown
}

/** What tRPC hands a resolver (Lyre's resolvers read `ctx` and `input` alone). */
interface ResolverOptions {
  readonly ctx: CallContext
  readonly input: unknown
  readonly path: string
  readonly type: "query" | "mutation"
  readonly meta: LyreMeta | undefined
  readonly signal: undefined
  readonly batchIndex: number
  readonly getRawInput: () => Promise<unknown>
}

/** The parts tRPC keeps of a procedure; `resolver` is not in its published type. */
interface ProcedureParts {
  readonly middlewares: ReadonlyArray<object & { readonly _type?: string }>
  readonly inputs: ReadonlyArray<unknown>
  readonly output?: unknown
  readonly resolver?: (opts: ResolverOptions) => unknown
  readonly meta?: unknown
  readonly type: string
}

/** tRPC keeps a flat `path -> procedure` record beside the nested one; its type shows only the latter. */
export const flatProcedures = (router: AnyTRPCRouter): Record<string, AnyTRPCProcedure> =>
  router._def.procedures as Record<string, AnyTRPCProcedure>

/** Thrown as tRPC's output step throws: a 500 `internal_error` to the caller. */
const outputFailed = (cause: unknown) =>
  new TRPCError({ message: "Output validation failed", code: "INTERNAL_SERVER_ERROR", cause })

/**
 * The answer held to its schema: parsed, and the parse must change nothing a client would see
 * (a field the schema does not declare, a default it fills, a transform, a key out of the
 * schema's order). Either failure is the 500 of tRPC's output step, logged with what differs:
 * it is a defect of the resolver, meant to be found by the tests.
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

const asItIs = (value: unknown) => value

/**
 * The procedure at `path` when it has the shape this calls directly; null otherwise.
 * `checkAnswers`: hold each answer to the output schema (tests, staging) or send it as it is.
 */
export const directProcedure = (
  router: AnyTRPCRouter,
  path: string,
  options: { readonly checkAnswers: boolean }
): DirectProcedure | null => {
  const procedure = flatProcedures(router)[path]
  if (procedure === undefined) return null
  // tRPC keeps these on every procedure; its published type shows only some.
  const parts = procedure._def as unknown as ProcedureParts
  const [first, input, output, resolve, ...more] = parts.middlewares
  const stage = first === undefined ? undefined : stageOf(first)
  const [inputParser, ...moreInputs] = parts.inputs
  if (
    stage === undefined ||
    input?._type !== "input" ||
    output?._type !== "output" ||
    resolve === undefined ||
    resolve._type !== undefined ||
    more.length > 0 ||
    moreInputs.length > 0 ||
    inputParser === undefined ||
    parts.output === undefined ||
    parts.resolver === undefined ||
    (parts.type !== "query" && parts.type !== "mutation")
  )
    return null
  return {
    path,
    type: parts.type,
    meta: parts.meta as LyreMeta | undefined,
    stage,
    // tRPC's own choice of parse function for a schema, made once as tRPC makes it.
    parseInput: getParseFn(inputParser as Parameters<typeof getParseFn>[0]),
    answer: options.checkAnswers
      ? checkedAnswer(path, getParseFn(parts.output as Parameters<typeof getParseFn>[0]))
      : asItIs,
    resolver: parts.resolver
  }
}

/**
 * Calls `procedure` for `ctx` with `input` (the adapter's raw input): its stage, input, resolver
 * and answer in tRPC's order, failing as tRPC's input and output steps fail. A parser or
 * resolver that answers at once is not awaited: each await is a turn of the microtask queue.
 */
export const callDirect = async (procedure: DirectProcedure, ctx: CallContext, input: unknown): Promise<unknown> => {
  const added = await procedure.stage(ctx, procedure.meta, procedure.type)
  let parsed: unknown
  try {
    parsed = procedure.parseInput(input)
    if (parsed instanceof Promise) parsed = await parsed
  } catch (cause) {
    throw new TRPCError({ code: "BAD_REQUEST", cause })
  }
  let data = procedure.resolver({
    ctx: { ...ctx, ...added },
    input: parsed,
    path: procedure.path,
    type: procedure.type,
    meta: procedure.meta,
    signal: undefined,
    batchIndex: 0,
    getRawInput: () => Promise.resolve(input)
  })
  if (data instanceof Promise) data = await data
  const answer = procedure.answer(data)
  return answer instanceof Promise ? await answer : answer
}
