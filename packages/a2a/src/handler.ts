/**
 * The A2A methods over the router. The SDK's `DefaultRequestHandler` is not used: it mints task
 * ids itself, keeps tasks in a `TaskStore` it writes, and follows a task through an in-process
 * event bus fed by an executor, none of which holds when core owns the tasks and any replica (or
 * a worker in another process) moves them. So this handler reads every task through the
 * router, and waits and streams by polling it (see docs/decisions.md, "A2A").
 */
import type {
  AgentCard,
  Message,
  MessageSendParams,
  Task,
  TaskArtifactUpdateEvent,
  TaskIdParams,
  TaskPushNotificationConfig,
  TaskQueryParams,
  TaskStatusUpdateEvent
} from "@a2a-js/sdk"
import { A2AError } from "@a2a-js/sdk/server"
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server"
import { IdempotencyKeyReused } from "@lyre/core"
import type { ApiError, GenerationTask, RouterInputs } from "@lyre/core"
import { callerOf } from "./caller.ts"
import type { Caller } from "./caller.ts"
import { a2aErrorFor, a2aErrorForProblem, shielded } from "./errors.ts"
import { idempotencyKeyOf, readSendParams, readTaskIdParams } from "./message.ts"
import { contextIdFor, endEvents, finalStatus, isFinished, statusUpdate, toA2aTask } from "./task.ts"

export interface WaitOptions {
  /** How long `configuration.blocking: true` waits for the end before answering. */
  readonly blockingWaitMillis: number
  /** How long a stream follows a task before it ends without a final event. */
  readonly streamMaxMillis: number
  /** Each poll is a request against the caller's per-minute limit: 1 s first, then this. */
  readonly pollMillis: number
  /** A stream with nothing to say for this long sends a `working` status-update. */
  readonly keepAliveMillis: number
}

export const defaultWaitOptions: WaitOptions = {
  blockingWaitMillis: 60_000,
  streamMaxMillis: 30 * 60_000,
  pollMillis: 2_000,
  keepAliveMillis: 15_000
}

const sleep = (millis: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, Math.max(0, millis))
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })

const need = (context: ServerCallContext | undefined): Caller => {
  const caller = callerOf(context)
  if (caller === undefined) throw A2AError.internalError("An internal error occurred.")
  return caller
}

interface Followed {
  readonly task: GenerationTask
  /** A poll failure other than the per-minute limit (which is waited out). */
  readonly error: ApiError | undefined
}

export class LyreRequestHandler implements A2ARequestHandler {
  readonly card: AgentCard
  readonly wait: WaitOptions

  constructor(card: AgentCard, wait: WaitOptions) {
    this.card = card
    this.wait = wait
  }

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.card)
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(A2AError.authenticatedExtendedCardNotConfigured())
  }

  sendMessage(params: MessageSendParams, context?: ServerCallContext): Promise<Message | Task> {
    return shielded(async () => {
      const caller = need(context)
      const { task, contextId, blocking } = await this.create(caller, params)
      if (!blocking) return toA2aTask(task, contextId)
      const followed = await this.follow(caller, task, Date.now() + this.wait.blockingWaitMillis)
      return toA2aTask(followed.task, contextId)
    })
  }

  async *sendMessageStream(
    params: MessageSendParams,
    context?: ServerCallContext
  ): AsyncGenerator<Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent, void, undefined> {
    const caller = need(context)
    const { task, contextId } = await this.create(caller, params)
    yield toA2aTask(task, contextId)
    yield* this.stream(caller, task, contextId)
  }

  getTask(params: TaskQueryParams, context?: ServerCallContext): Promise<Task> {
    return shielded(async () => {
      const task = await this.load(need(context), params)
      return toA2aTask(task, contextIdFor(task.id))
    })
  }

  /** A generation cannot be stopped once submitted: known tasks answer TaskNotCancelable. */
  cancelTask(params: TaskIdParams, context?: ServerCallContext): Promise<Task> {
    return shielded(async () => {
      const task = await this.load(need(context), params)
      throw A2AError.taskNotCancelable(task.id)
    })
  }

  async *resubscribe(
    params: TaskIdParams,
    context?: ServerCallContext
  ): AsyncGenerator<Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent, void, undefined> {
    const caller = need(context)
    const task = await this.load(caller, params)
    const contextId = contextIdFor(task.id)
    yield toA2aTask(task, contextId)
    yield* this.stream(caller, task, contextId)
  }

  setTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  listTaskPushNotificationConfigs(): Promise<Array<TaskPushNotificationConfig>> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  deleteTaskPushNotificationConfig(): Promise<void> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  private async create(caller: Caller, params: MessageSendParams) {
    const read = readSendParams(params)
    if (!read.ok) throw a2aErrorForProblem(read.problem)
    // The input is judged by core's GenerateRequest schema inside the procedure, not here.
    const created = await caller.call(
      read.input,
      (procedures) => procedures.generations.create(read.input as RouterInputs["generations"]["create"]),
      idempotencyKeyOf(read.messageId)
    )
    if (!created.ok) {
      throw a2aErrorFor(
        created.error._tag === "IdempotencyKeyReused"
          ? new IdempotencyKeyReused({ message: "This messageId was already sent with another message; give each message its own messageId." })
          : created.error
      )
    }
    return { task: created.value, contextId: read.contextId ?? contextIdFor(created.value.id), blocking: read.blocking }
  }

  private async load(caller: Caller, params: TaskIdParams): Promise<GenerationTask> {
    const read = readTaskIdParams(params)
    if (!read.ok) throw a2aErrorForProblem(read.problem)
    const input = { id: read.id }
    const found = await caller.call(input, (procedures) => procedures.generations.get(input))
    if (!found.ok) throw a2aErrorFor(found.error)
    return found.value
  }

  /**
   * Polls the task through the router until it ends, the deadline passes or the client leaves.
   * A 429 from the per-minute limit is waited out, since the poll is ours, not the agent's.
   */
  private async follow(caller: Caller, start: GenerationTask, deadline: number): Promise<Followed> {
    let task = start
    let delay = 1_000
    while (!isFinished(task) && !caller.signal.aborted) {
      const remaining = deadline - Date.now()
      if (remaining <= 0) break
      await sleep(Math.min(delay, remaining), caller.signal)
      delay = this.wait.pollMillis
      if (caller.signal.aborted || Date.now() >= deadline) break
      const input = { id: task.id }
      const polled = await caller.call(input, (procedures) => procedures.generations.get(input))
      if (polled.ok) task = polled.value
      else if (polled.error._tag === "RpmExceeded") delay = Math.max(this.wait.pollMillis, polled.error.retryAfterSeconds * 1_000)
      else return { task, error: polled.error }
    }
    return { task, error: undefined }
  }

  private async *stream(
    caller: Caller,
    start: GenerationTask,
    contextId: string
  ): AsyncGenerator<TaskStatusUpdateEvent | TaskArtifactUpdateEvent, void, undefined> {
    if (isFinished(start)) {
      yield finalStatus(start, contextId)
      return
    }
    const end = Date.now() + this.wait.streamMaxMillis
    let task = start
    for (;;) {
      const followed = await this.follow(caller, task, Math.min(end, Date.now() + this.wait.keepAliveMillis))
      if (followed.error !== undefined) throw a2aErrorFor(followed.error)
      task = followed.task
      if (isFinished(task)) {
        yield* endEvents(task, contextId)
        return
      }
      if (caller.signal.aborted || Date.now() >= end) return
      yield statusUpdate(task, contextId, false)
    }
  }
}
