/**
 * A statement that commits without waiting for its WAL flush, for writes whose loss in a crash
 * of PostgreSQL itself the service already recovers from (docs/decisions/0012-* and 0013-* name each one).
 * `set_config(..., true)` holds for the statement's own implicit transaction, which is what its
 * commit reads; the statement must refer to the CTE (`applied`) or PostgreSQL never runs it.
 *
 *   with ${relaxedCommit.cte} update ... where ... and ${relaxedCommit.applied}
 */
export const relaxedCommit = {
  cte: "relaxed as (select set_config('synchronous_commit', 'off', true))",
  applied: "exists (select 1 from relaxed)"
} as const
