/** Inputs of the dashboard's procedures that the admin API's bodies do not already describe. */
import { z } from "zod"
import { RotateWebhookSecretBody, UpdateWebhookEndpointBody } from "./admin.ts"

export const ById = z.strictObject({ id: z.string().min(1).max(100) })

export const UpdateWebhookEndpointInput = UpdateWebhookEndpointBody.extend({ id: z.string().min(1).max(100) })

export const RotateWebhookSecretInput = RotateWebhookSecretBody.extend({ id: z.string().min(1).max(100) })

export const SetCreditAlertInput = z.strictObject({
  credit_alert_threshold: z.int().min(0).nullable()
})
