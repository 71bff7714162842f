/**
 * Lyre's CPU a request against the bare handler's, measured in short turns that alternate
 * between the two many times, each turn's CPU read to the nanosecond (decision 0111).
 *
 * Why: on this machine (a virtual one whose host preempts it without reporting steal time) a
 * process's CPU for the same work moves by a third from one 5 s turn to the next, so six turns a
 * side could not settle a 15 % goal. A time the host takes is charged to whichever process was
 * running; in turns of a second that alternate A B B A, what the host does over a few seconds
 * falls on both sides alike, and the median of many pairs is not moved by one bad second.
 *
 * The load is this process's own: `connections` kept-alive connections to each side, opened
 * once, and requests sent at `rate` a second to the side whose turn it is, never to both. The
 * CPU is the sum over the service's threads of the kernel's exact run time (`schedstat`), so a
 * turn of a second is read as precisely as a minute.
 */
import { Agent, request } from "node:http"
import { cpuNanosOf } from "./support.ts"
import type { BenchRequest } from "./support.ts"

export interface PairedSide {
  readonly url: string
  readonly pid: number | undefined
}

export interface PairedOptions {
  /** Requests a second, evenly spaced; absent, each connection sends its next as its last is answered. */
  readonly rate: number | undefined
  readonly connections: number
  readonly turnMillis: number
  readonly pairs: number
  /** Seconds of load on each side before the first turn, in turns as the measure's. */
  readonly warmSeconds: number
}

/** One side over all its measured turns. */
export interface SideFigures {
  /** µs of CPU a request. */
  readonly micros: number
  readonly requests: number
  /** Requests answered a second of its turns. */
  readonly perSecond: number
  readonly errors: number
}

export interface PairedResult {
  /** Each pair's Lyre/bare ratio of CPU a request, sorted. */
  readonly ratios: ReadonlyArray<number>
  readonly sides: readonly [SideFigures, SideFigures]
}

const sendOne = (agent: Agent, url: URL, sent: BenchRequest) =>
  new Promise<boolean>((resolve) => {
    const req = request(url, { method: sent.method, agent, headers: sent.headers }, (res) => {
      res.resume()
      res.on("end", () => resolve((res.statusCode ?? 500) < 400))
      res.on("error", () => resolve(false))
    })
    req.on("error", () => resolve(false))
    req.end(sent.freshBody?.() ?? sent.body)
  })

interface Turn {
  readonly agent: Agent
  readonly side: PairedSide
  readonly requestFor: (index: number) => BenchRequest
  readonly options: PairedOptions
  /** The index of the next request, across both sides and every turn. */
  readonly counter: { next: number }
}

/** Each of `connections` sends its next request as its last is answered, for a turn's length. */
const closedLoopTurn = async ({ agent, side, requestFor, options, counter }: Turn) => {
  const end = performance.now() + options.turnMillis
  let requests = 0
  let errors = 0
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < end) {
        const sent = requestFor(counter.next++)
        const ok = await sendOne(agent, new URL(sent.path, side.url), sent)
        requests++
        if (!ok) errors++
      }
    })
  )
  return { requests, errors }
}

/**
 * One turn on a side: `rate` requests a second, evenly spaced, resolving when every answer is
 * in; or with no rate, closed loops.
 */
const runTurn = async (turn: Turn) => {
  const { agent, side, requestFor, options, counter } = turn
  const { rate } = options
  if (rate === undefined) return closedLoopTurn(turn)
  const count = Math.round((rate * options.turnMillis) / 1000)
  const started = performance.now()
  const pending: Array<Promise<boolean>> = []
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    const sent = requestFor(counter.next++)
    pending.push(sendOne(agent, new URL(sent.path, side.url), sent))
  }
  const answers = await Promise.all(pending)
  return { requests: answers.length, errors: answers.filter((ok) => !ok).length }
}

export const pairedCompare = async (
  sides: readonly [PairedSide, PairedSide],
  requestFor: (index: number) => BenchRequest,
  options: PairedOptions
): Promise<PairedResult> => {
  const counter = { next: 0 }
  const turns = sides.map(
    (side): Turn => ({
      agent: new Agent({ keepAlive: true, maxSockets: options.connections }),
      side,
      requestFor,
      options,
      counter
    })
  )
  const totals = sides.map(() => ({ nanos: 0, requests: 0, errors: 0 }))
  const ratios: Array<number> = []
  try {
    const warmTurns = Math.max(1, Math.round((options.warmSeconds * 1000) / options.turnMillis))
    for (let i = 0; i < warmTurns; i++) {
      for (const index of [0, 1]) {
        await runTurn(turns[index] as Turn)
      }
    }
    for (let pair = 0; pair < options.pairs; pair++) {
      const perRequest = [0, 0]
      // A B, then B A: a drift within a pair falls on both sides alike over two pairs.
      for (const index of pair % 2 === 0 ? [0, 1] : [1, 0]) {
        const turn = turns[index] as Turn
        const before = cpuNanosOf(turn.side.pid)
        const done = await runTurn(turn)
        const used = cpuNanosOf(turn.side.pid) - before
        const total = totals[index] as (typeof totals)[number]
        total.nanos += used
        total.requests += done.requests
        total.errors += done.errors
        perRequest[index] = used / Math.max(1, done.requests)
      }
      ratios.push((perRequest[0] ?? 0) / Math.max(1e-9, perRequest[1] ?? 0))
    }
  } finally {
    for (const turn of turns) turn.agent.destroy()
  }
  const figure = (index: number): SideFigures => {
    const total = totals[index] as (typeof totals)[number]
    return {
      micros: total.nanos / 1000 / Math.max(1, total.requests),
      requests: total.requests,
      perSecond: total.requests / ((options.pairs * options.turnMillis) / 1000),
      errors: total.errors
    }
  }
  return { ratios: ratios.sort((a, b) => a - b), sides: [figure(0), figure(1)] }
}
