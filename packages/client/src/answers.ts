/** Reading the server's answers: JSON, and a refusal as the error it stands for. */
import { LyreApiError, LyreConnectionError, errorBodyOf } from "./errors.ts"
import { parseRetryAfter } from "./retry.ts"

/** A failure's message with its cause's, for a connection error. */
export const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
    return `${cause.message}${inner}`
  }
  return String(cause)
}

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A 2xx answer's JSON body; a body cut off or not JSON is a connection error. */
export const jsonOf = async <A>(response: Response, url: string): Promise<A> => {
  const text = await response.text().catch((cause: unknown) => {
    throw new LyreConnectionError(`The answer from ${url} was cut off: ${describeCause(cause)}`, {
      cause,
      status: response.status
    })
  })
  const json = parseJson(text)
  if (json === undefined) {
    throw new LyreConnectionError(`${url} answered ${response.status} with something that is not JSON.`, {
      status: response.status
    })
  }
  return json as A
}

/** A non-2xx answer as the envelope's error, or a connection error when it is not the API's. */
export const failureOf = async (response: Response): Promise<LyreApiError | LyreConnectionError> => {
  const text = await response.text().catch(() => "")
  const body = errorBodyOf(parseJson(text))
  if (body === undefined) {
    return new LyreConnectionError(
      `${response.url || "The server"} answered ${response.status} without the API's error envelope.`,
      {
        status: response.status
      }
    )
  }
  return new LyreApiError(response.status, body, {
    retryAfterSeconds: parseRetryAfter(response.headers.get("retry-after")),
    requestId: response.headers.get("x-request-id") ?? undefined
  })
}
