/**
 * The A2A methods over the router, as the SDK's 1.x `A2ARequestHandler`: its JSON-RPC transport
 * (1.0) and its compatibility layer's (0.3) both call this one handler, each translating its
 * own wire shapes. The SDK's `DefaultRequestHandler` is not used: it mints task ids itself,
 * keeps tasks in a `TaskStore` it writes, and follows a task through an in-process event bus fed
 * by an executor, none of which holds when core owns the tasks and any replica (or a worker in
 * another process) moves them. So this handler reads every task through the router, and waits
 * and streams by polling it (see docs/decisions/0036-a2a-json-rpc-shim.md and 0037-a2a-1-0-beside-0-3.md).
 */
import type {
  AgentCard,
  CancelTaskRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig
} from "@a2a-js/sdk"
import {
  JsonRpcExtendedAgentCardNotConfiguredError,
  JsonRpcPushNotificationNotSupportedError,
  JsonRpcTaskNotCancelableError,
  JsonRpcUnsupportedOperationError
} from "@a2a-js/sdk/errors"
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server"
import { IdempotencyKeyReused, isExportId, isLyricsId, isUploadId } from "@lyre/core"
import type { ApiError, Persona, RouterInputs } from "@lyre/core"
import { callerOf } from "./caller.ts"
import type { Caller, CallResult, Procedures } from "./caller.ts"
import { a2aErrorFor, a2aErrorForProblem, internalError, shielded } from "./errors.ts"
import { idempotencyKeyOf, readSendParams, readTaskIdParams } from "./message.ts"
import type { Operation } from "./message.ts"
import {
  contextIdFor,
  endEvents,
  hasPreviews,
  isFinished,
  personaMessage,
  statusUpdate,
  taskEvent,
  toA2aTask
} from "./task.ts"
import type { A2aJob } from "./task.ts"

export interface WaitOptions {
  /** How long a blocking send (1.0 by default, 0.3 with `blocking: true`) waits for the end before answering. */
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

const need = (context: ServerCallContext): Caller => {
  const caller = callerOf(context)
  if (caller === undefined) throw internalError()
  return caller
}

const pushNotSupported = () =>
  Promise.reject(new JsonRpcPushNotificationNotSupportedError({ message: "Push notifications are not supported." }))

interface Followed {
  readonly task: A2aJob
  /** A poll failure other than the per-minute limit (which is waited out). */
  readonly error: ApiError | undefined
}

/** What a message starts: a task to follow, or (a persona, made at once) the thing itself. */
type Started = { readonly task: A2aJob } | { readonly persona: Persona }

type Operations = Exclude<Operation, "create_persona">

/**
 * Runs the operation a message names through its procedure: a generation, an extension or a
 * track task (each a generation too), an export, an upload or a persona. The input is judged by
 * core's schema inside the procedure.
 */
const startTask = (
  caller: Caller,
  operation: Operations,
  input: unknown,
  idempotencyKey: string
): Promise<CallResult<A2aJob>> => {
  const run = <A extends A2aJob>(call: (procedures: Procedures) => Promise<A>) =>
    caller.call(input, call, idempotencyKey)
  switch (operation) {
    case "generate_music":
      return run((procedures) => procedures.generations.create(input as RouterInputs["generations"]["create"]))
    case "extend_track":
      return run((procedures) => procedures.tracks.extend(input as RouterInputs["tracks"]["extend"]))
    case "export_track":
      return run((procedures) => procedures.tracks.export(input as RouterInputs["tracks"]["export"]))
    case "upload_audio":
      return run((procedures) => procedures.uploads.createFrom(input as RouterInputs["uploads"]["createFrom"]))
    case "cover_track":
      return run((procedures) => procedures.tracks.cover(input as RouterInputs["tracks"]["cover"]))
    case "add_vocals":
      return run((procedures) => procedures.tracks.vocals(input as RouterInputs["tracks"]["vocals"]))
    case "add_instrumental":
      return run((procedures) => procedures.tracks.instrumental(input as RouterInputs["tracks"]["instrumental"]))
    case "edit_track":
      return run((procedures) => procedures.tracks.edit(input as RouterInputs["tracks"]["edit"]))
    case "lyrics":
      return run((procedures) => procedures.lyrics.create(input as RouterInputs["lyrics"]["create"]))
  }
}

const start = async (
  caller: Caller,
  operation: Operation,
  input: unknown,
  idempotencyKey: string
): Promise<CallResult<Started>> => {
  if (operation === "create_persona") {
    const made = await caller.call(input, (procedures) =>
      procedures.personas.create(input as RouterInputs["personas"]["create"])
    )
    return made.ok ? { ok: true, value: { persona: made.value } } : made
  }
  const started = await startTask(caller, operation, input, idempotencyKey)
  return started.ok ? { ok: true, value: { task: started.value } } : started
}

/** A task by its id: an export (`exp_...`) or an upload (`upl_...`) through its procedure, anything else as a generation. */
const get = (caller: Caller, id: string): Promise<CallResult<A2aJob>> => {
  const input = { id }
  return isExportId(id)
    ? caller.call(input, (procedures) => procedures.exports.get(input))
    : isUploadId(id)
      ? caller.call(input, (procedures) => procedures.uploads.get(input))
      : isLyricsId(id)
        ? caller.call(input, (procedures) => procedures.lyrics.get(input))
        : caller.call(input, (procedures) => procedures.generations.get(input))
}

type Created =
  | { readonly task: A2aJob; readonly contextId: string; readonly blocking: boolean }
  | { readonly persona: Persona; readonly contextId: string }

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
    return Promise.reject(
      new JsonRpcExtendedAgentCardNotConfiguredError({ message: "There is no extended agent card." })
    )
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return shielded(async () => {
      const caller = need(context)
      const created = await this.create(caller, params, context)
      if ("persona" in created) return personaMessage(created.persona, created.contextId)
      const { task, contextId, blocking } = created
      if (!blocking) return toA2aTask(task, contextId)
      const followed = await this.follow(caller, task, Date.now() + this.wait.blockingWaitMillis)
      return toA2aTask(followed.task, contextId)
    })
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const caller = need(context)
    const created = await this.create(caller, params, context)
    if ("persona" in created) {
      yield { payload: { $case: "message", value: personaMessage(created.persona, created.contextId) } }
      return
    }
    const { task, contextId } = created
    yield taskEvent(task, contextId)
    yield* this.stream(caller, task, contextId, context)
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return shielded(async () => {
      const task = await this.load(need(context), params, context)
      return toA2aTask(task, contextIdFor(task.id))
    })
  }

  /** Not offered: a page of the account's tasks is REST's list (A2A 1.0 also wants a total Lyre does not count). */
  listTasks(): Promise<ListTasksResponse> {
    return Promise.reject(
      new JsonRpcUnsupportedOperationError({
        message: "ListTasks is not offered; list the account's tasks with GET /api/v1/music/generations."
      })
    )
  }

  /** A generation cannot be stopped once submitted: known tasks answer TaskNotCancelable. */
  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return shielded(async () => {
      const task = await this.load(need(context), params, context)
      const what = isExportId(task.id)
        ? "an export"
        : isUploadId(task.id)
          ? "listening to an upload"
          : isLyricsId(task.id)
            ? "writing lyrics"
            : "a generation"
      throw new JsonRpcTaskNotCancelableError({
        message: `Task ${task.id} cannot be canceled: ${what} runs to its end once submitted.`
      })
    })
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const caller = need(context)
    const task = await this.load(caller, params, context)
    const contextId = contextIdFor(task.id)
    yield taskEvent(task, contextId)
    yield* this.stream(caller, task, contextId, context)
  }

  createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    return pushNotSupported()
  }

  getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    return pushNotSupported()
  }

  listTaskPushNotificationConfigs(): Promise<ListTaskPushNotificationConfigsResponse> {
    return pushNotSupported()
  }

  deleteTaskPushNotificationConfig(): Promise<void> {
    return pushNotSupported()
  }

  private async create(caller: Caller, params: SendMessageRequest, context: ServerCallContext): Promise<Created> {
    const read = readSendParams(params, context.requestedVersion)
    if (!read.ok) throw a2aErrorForProblem(read.problem, context)
    const created = await start(caller, read.operation, read.input, idempotencyKeyOf(read.messageId))
    if (!created.ok) {
      throw a2aErrorFor(
        created.error._tag === "IdempotencyKeyReused"
          ? new IdempotencyKeyReused({
              message: "This messageId was already sent with another message; give each message its own messageId."
            })
          : created.error,
        context
      )
    }
    const started = created.value
    if ("persona" in started) {
      return { persona: started.persona, contextId: read.contextId ?? contextIdFor(started.persona.id) }
    }
    return { task: started.task, contextId: read.contextId ?? contextIdFor(started.task.id), blocking: read.blocking }
  }

  private async load(caller: Caller, params: { readonly id: string }, context: ServerCallContext): Promise<A2aJob> {
    const read = readTaskIdParams(params)
    if (!read.ok) throw a2aErrorForProblem(read.problem, context)
    const found = await get(caller, read.id)
    if (!found.ok) throw a2aErrorFor(found.error, context)
    return found.value
  }

  /**
   * Polls the task through the router until it ends (or `stop` holds of it), the deadline passes
   * or the client leaves. A 429 from the per-minute limit is waited out, since the poll is ours,
   * not the agent's.
   */
  private async follow(
    caller: Caller,
    start: A2aJob,
    deadline: number,
    stop: (task: A2aJob) => boolean = isFinished
  ): Promise<Followed> {
    let task = start
    let delay = 1_000
    while (!stop(task) && !caller.signal.aborted) {
      const remaining = deadline - Date.now()
      if (remaining <= 0) break
      await sleep(Math.min(delay, remaining), caller.signal)
      delay = this.wait.pollMillis
      if (caller.signal.aborted || Date.now() >= deadline) break
      const polled = await get(caller, task.id)
      if (polled.ok) task = polled.value
      else if (polled.error._tag === "RpmExceeded")
        delay = Math.max(this.wait.pollMillis, polled.error.retryAfterSeconds * 1_000)
      else return { task, error: polled.error }
    }
    return { task, error: undefined }
  }

  private async *stream(
    caller: Caller,
    start: A2aJob,
    contextId: string,
    context: ServerCallContext
  ): AsyncGenerator<StreamResponse, void, undefined> {
    if (isFinished(start)) {
      yield statusUpdate(start, contextId)
      return
    }
    const end = Date.now() + this.wait.streamMaxMillis
    let task = start
    // Audio before `ready` (decision 0128): the first look that finds previews says so at once,
    // in a status update whose message carries the streams; the task event said so if it had them.
    let told = hasPreviews(start)
    const news = (polled: A2aJob) => isFinished(polled) || (!told && hasPreviews(polled))
    for (;;) {
      const followed = await this.follow(caller, task, Math.min(end, Date.now() + this.wait.keepAliveMillis), news)
      if (followed.error !== undefined) throw a2aErrorFor(followed.error, context)
      task = followed.task
      if (isFinished(task)) {
        yield* endEvents(task, contextId)
        return
      }
      if (caller.signal.aborted || Date.now() >= end) return
      told ||= hasPreviews(task)
      yield statusUpdate(task, contextId)
    }
  }
}
