/**
 * `credits.low`, edge-triggered (DESIGN.md section 4): a balance change that takes the total from
 * `>= threshold` to `< threshold` while the account is armed fires once and disarms it; any
 * change that leaves the total `>= threshold` re-arms it. These SQL expressions are spliced into
 * the very statement that changes the balance (debit, refund, grant, adjustment), over the row it
 * locked, so concurrent changes are judged one after the other and each crossing fires exactly once.
 * Arguments are SQL expressions over columns, never values.
 */
export interface AlertColumns {
  /** The total before the change. */
  readonly before: string
  /** The total after it. */
  readonly after: string
  /** The account's `credit_alert_threshold` (null: no alerts). */
  readonly threshold: string
  /** The account's `credit_alert_armed` before the change. */
  readonly armed: string
}

/** The new value of `credit_alert_armed`. */
export const armedAfter = (c: AlertColumns): string =>
  `(case when ${c.threshold} is null then ${c.armed} when ${c.after} >= ${c.threshold} then true
         when ${c.before} >= ${c.threshold} then false else ${c.armed} end)`

/** Whether this change fires `credits.low`. */
export const alertFires = (c: AlertColumns): string =>
  `(${c.armed} and ${c.threshold} is not null and ${c.before} >= ${c.threshold} and ${c.after} < ${c.threshold})`

/** The event's data, from SQL expressions of the threshold and the buckets after the change. */
export const creditsLowPayload = (threshold: string, subscription: string, onetime: string): string =>
  `jsonb_build_object('threshold', ${threshold}, 'balance', ${subscription} + ${onetime},
     'subscription_credits', ${subscription}, 'onetime_credits', ${onetime})`
