/**
 * The `key.expiring` data built in SQL from a key row aliased `alias`, as of `nowIso` (an ISO
 * literal from our clock, never user input): `days_until_expiry` is the whole days left rounded
 * up, so 1 for a key with up to 24 hours to live.
 */
export const keyExpiringPayload = (alias: string, nowIso: string): string =>
  `jsonb_build_object('api_key_id', ${alias}.id, 'prefix', ${alias}.prefix, 'name', ${alias}.name,
     'expires_at', to_char(${alias}.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
     'days_until_expiry', greatest(1, ceil(extract(epoch from (${alias}.expires_at - '${nowIso}'::timestamptz)) / 86400))::int)`
