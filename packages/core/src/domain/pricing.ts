import type { ExportFormat, ModelName, Plan } from "./models.ts"

/** Credits charged per generation request, by model. */
export const priceOf: { readonly [M in ModelName]: number } = { aether: 50, echo: 100, nocturne: 180 }

/** Credits charged per export, by format (DESIGN.md section 9). An extension is priced as a generation. */
export const exportPriceOf: { readonly [F in ExportFormat]: number } = { wav: 5, midi: 5, stems: 20, timed_lyrics: 5 }

/** Credits charged per lyrics task, whichever writer writes it (DESIGN.md section 12). */
export const lyricsPrice = 2

const planRank: { readonly [P in Plan]: number } = { free: 0, basic: 1, pro: 2, ultra: 3 }

/** Access requires the Pro plan or higher, checked on every request. */
export const planAllowsAccess = (plan: Plan): boolean => planRank[plan] >= planRank.pro

/**
 * Uploads an account may keep at once, by plan (DESIGN.md section 11): one more is 403
 * `upload_quota_exceeded` until one is deleted. Below Pro the API answers nothing at all.
 */
export const keptUploadsAllowed: { readonly [P in Plan]: number } = { free: 0, basic: 0, pro: 50, ultra: 500 }

/** In-flight generations per credential unless the account has an override. */
export const defaultConcurrencyLimit = (plan: Plan): number => (plan === "ultra" ? 20 : 10)

export const defaultRequestsPerMinute = 60

/** Tracks per task: the upstream's convention. */
export const tracksPerTask = 2
