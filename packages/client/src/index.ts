export { LyreApiError, LyreConnectionError } from "./errors.ts"
export { apiRootOf, DEFAULT_BASE_URL, LyreClient, siteRootOf } from "./rest.ts"
export type {
  CreateOptions,
  DownloadOptions,
  DownloadStream,
  ListOptions,
  LyreClientOptions,
  RequestOptions,
  RetryInfo,
  WaitOptions,
  WaitProgress
} from "./rest.ts"
export { createLyreTrpcClient } from "./trpc.ts"
export type { LyreTrpcClient, LyreTrpcClientOptions } from "./trpc.ts"
export type {
  Account,
  ErrorBody,
  ErrorType,
  GenerateRequest,
  GenerationTask,
  GenerationTaskList,
  TaskStatus,
  Track
} from "./types.ts"
