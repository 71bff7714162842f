export { isPrivateAddress } from "./address.ts"
export { deliverWebhook } from "./deliver.ts"
export type { DeliveryError, DeliveryErrorCode, DeliveryRequest, DeliveryResult } from "./deliver.ts"
export { SIGNATURE_HEADER } from "./event.ts"
export type {
  LyreEventData,
  LyreEventType,
  LyreWebhookEvent,
  WebhookEvent,
  WebhookExport,
  WebhookExportFile,
  WebhookLyrics,
  WebhookTrack,
  WebhookUpload
} from "./event.ts"
export { generateWebhookSecret } from "./secret.ts"
export { signWebhook, verifyWebhook, WebhookVerificationError } from "./signature.ts"
export type { RawBody, VerifyOptions, WebhookVerificationReason } from "./signature.ts"
export { outboundTarget, PRIVATE_ADDRESS } from "./outbound.ts"
export type { OutboundRefusal, OutboundTarget } from "./outbound.ts"
