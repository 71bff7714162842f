export { LyreApiError, LyreConnectionError } from "./errors.ts"
export { apiRootOf, DEFAULT_BASE_URL, LyreClient, siteRootOf } from "./rest.ts"
export type {
  CreateOptions,
  DownloadOptions,
  DownloadStream,
  ExportListOptions,
  ExportWaitOptions,
  ExportWaitProgress,
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
  Export,
  ExportFile,
  ExportFormat,
  ExportList,
  ExtendRequest,
  GenerateRequest,
  GenerationTask,
  GenerationTaskList,
  TaskStatus,
  TimedWord,
  Track
} from "./types.ts"
