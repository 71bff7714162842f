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
  LyricsWaitOptions,
  LyricsWaitProgress,
  RequestOptions,
  RetryInfo,
  UploadWaitOptions,
  UploadWaitProgress,
  WaitOptions,
  WaitProgress
} from "./rest.ts"
export { embeddedFormatOf, readContentCredentials } from "./contentCredentials.ts"
export type {
  ActionSummary,
  ContentCredentialsOptions,
  ContentCredentialsReport,
  IngredientSummary,
  ManifestSummary,
  ValidationFailure
} from "./contentCredentials.ts"
export { createLyreTrpcClient } from "./trpc.ts"
export { uploadAudio } from "./upload.ts"
export type { UploadOptions, UploadSource, UploadTarget } from "./upload.ts"
export type { LyreTrpcClient, LyreTrpcClientOptions } from "./trpc.ts"
export type {
  Account,
  CoverRequest,
  DeletedPersona,
  DeletedUpload,
  EditRequest,
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
  InstrumentalRequest,
  LyricsRequest,
  LyricsTask,
  LyricsTaskList,
  LyricsVariation,
  Persona,
  PersonaList,
  PersonaRequest,
  Preview,
  TaskStatus,
  TimedWord,
  Track,
  Upload,
  UploadAnalysis,
  UploadList,
  UploadStatus,
  VocalsRequest
} from "./types.ts"
