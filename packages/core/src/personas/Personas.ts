/**
 * Personas (DESIGN.md section 11): a voice kept from a track of the account, free of credits,
 * named later by `persona_id` wherever a GenerateRequest is taken. The provider makes its own at
 * once (the upstream's `generate-persona` answers with its `personaId`, kept beside ours); a
 * refusal is 500 `provider_error` and nothing is kept. A deleted persona is only marked so: the
 * tracks made with it are rendered again from it.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { z } from "zod"
import { InvalidParameter, ProviderError } from "../domain/errors.ts"
import type { PersonaNotFound, TrackNotFound } from "../domain/errors.ts"
import { hasIdShape, Ids } from "../domain/ids.ts"
import { text } from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import { personaNotFound, trackSources } from "../generation/sources.ts"
import type { FoundTrack } from "../generation/sources.ts"
import { Provider } from "../provider/Provider.ts"
import { WriteSql } from "../platform/WriteSql.ts"

export const PersonaRequest = z.strictObject({
  track_id: z.string().describe("The track whose voice and arrangement palette the persona keeps (`trk_...`)."),
  name: text(1, 200).describe("A name to know the persona by."),
  description: text(1, 1000).describe("What the voice and style are like.")
})
export type PersonaRequest = z.infer<typeof PersonaRequest>

export const Persona = z.object({
  id: z.string().describe("Persona id (`per_...`)."),
  name: z.string(),
  description: z.string(),
  track_id: z.string(),
  vocal_gender: z.enum(["m", "f"]).nullable().describe("The voice's register; null for a track without vocals."),
  created_at: z.iso.datetime()
})
export type Persona = z.infer<typeof Persona>

export const PersonaList = z.object({ data: z.array(Persona), has_more: z.boolean() })
export type PersonaList = z.infer<typeof PersonaList>

export const GetPersonaParams = z.strictObject({ id: z.string() })

export const ListPersonasQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().optional()
})

export const DeletedPersona = z.object({ id: z.string(), deleted: z.literal(true) })
export type DeletedPersona = z.infer<typeof DeletedPersona>

interface PersonaRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly track_id: string
  readonly vocal_gender: "m" | "f" | null
  readonly created_at: Date
}

const personaColumns = "id, name, description, track_id, vocal_gender, created_at"

const renderPersona = (row: PersonaRow): Persona => ({
  id: row.id,
  name: row.name,
  description: row.description,
  track_id: row.track_id,
  vocal_gender: row.vocal_gender,
  created_at: row.created_at.toISOString()
})

/** The voice of a track: asked for in its request, or named in its tags ("female vocals"); none when nothing is sung. */
export const vocalGenderOf = (found: FoundTrack): "m" | "f" | null => {
  if (found.request.instrumental || (found.request.lyrics ?? "").trim() === "") return null
  if (found.request.vocal_gender !== undefined) return found.request.vocal_gender
  const tags = (found.tags ?? found.request.style).toLowerCase()
  if (/\bfemale\b|\bwoman\b|\bgirl\b/.test(tags)) return "f"
  if (/\bmale\b|\bman\b|\bboy\b/.test(tags)) return "m"
  return null
}

export class Personas extends Context.Service<
  Personas,
  {
    /** `POST /v1/personas`: 201 the Persona. */
    readonly create: (
      principal: Principal,
      input: PersonaRequest
    ) => Effect.Effect<Persona, TrackNotFound | ProviderError>
    readonly get: (principal: Principal, id: string) => Effect.Effect<Persona, PersonaNotFound>
    readonly list: (
      principal: Principal,
      page: { readonly limit: number; readonly startingAfter: string | undefined }
    ) => Effect.Effect<PersonaList, InvalidParameter>
    readonly remove: (principal: Principal, id: string) => Effect.Effect<DeletedPersona, PersonaNotFound>
    /** Every live persona of an account, newest first (the admin API). */
    readonly personasOfAccount: (accountId: string, limit: number) => Effect.Effect<ReadonlyArray<Persona>>
  }
>()("lyre/core/personas/Personas") {
  static readonly layer = Layer.effect(
    Personas,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const writes = yield* WriteSql
      const ids = yield* Ids
      const provider = yield* Provider
      const { findTrack } = yield* trackSources

      const create = Effect.fn("Personas.create")(function* (principal: Principal, input: PersonaRequest) {
        const found = yield* findTrack(principal.accountId, input.track_id)
        const id = yield* ids.make("persona")
        const outcome = yield* provider.createPersona({
          personaId: id,
          name: input.name,
          description: input.description,
          source: found.source
        })
        if (outcome._tag === "Rejected") {
          yield* Effect.logWarning("persona refused by the provider", { detail: outcome.message })
          return yield* new ProviderError({ message: "The music provider could not make this persona." })
        }
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const [row] = yield* writes<PersonaRow>`
          insert into personas (id, account_id, track_id, name, description, vocal_gender, provider_persona_id, created_at)
          values (${id}, ${principal.accountId}, ${input.track_id}, ${input.name}, ${input.description},
                  ${vocalGenderOf(found)}, ${outcome.providerPersonaId}, ${now}::timestamptz)
          returning ${writes.literal(personaColumns)}`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.die(new Error("A persona insert returned no row."))
        return renderPersona(row)
      })

      const get = Effect.fnUntraced(function* (principal: Principal, id: string) {
        if (!hasIdShape("persona", id)) return yield* personaNotFound(id, "id")
        const [row] = yield* sql<PersonaRow>`
          select ${sql.literal(personaColumns)} from personas
          where id = ${id} and account_id = ${principal.accountId} and deleted_at is null`.pipe(Effect.orDie)
        if (row === undefined) return yield* personaNotFound(id, "id")
        return renderPersona(row)
      })

      const list = Effect.fn("Personas.list")(function* (
        principal: Principal,
        page: { readonly limit: number; readonly startingAfter: string | undefined }
      ) {
        const cursor = page.startingAfter
        if (cursor !== undefined) {
          const [found] = hasIdShape("persona", cursor)
            ? yield* sql`select 1 from personas where id = ${cursor} and account_id = ${principal.accountId}`.pipe(
                Effect.orDie
              )
            : []
          if (found === undefined) {
            return yield* new InvalidParameter({
              message: `starting_after: no persona ${cursor}.`,
              param: "starting_after"
            })
          }
        }
        const rows = yield* sql<PersonaRow>`
          select ${sql.literal(personaColumns)} from personas p
          where p.account_id = ${principal.accountId} and p.deleted_at is null
          ${
            cursor === undefined
              ? sql``
              : sql`and (p.created_at, p.id) < (select created_at, id from personas where id = ${cursor})`
          }
          order by p.created_at desc, p.id desc
          limit ${page.limit + 1}`.pipe(Effect.orDie)
        return { data: rows.slice(0, page.limit).map(renderPersona), has_more: rows.length > page.limit }
      })

      const remove = Effect.fnUntraced(function* (principal: Principal, id: string) {
        if (!hasIdShape("persona", id)) return yield* personaNotFound(id, "id")
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const rows = yield* writes<{ id: string }>`
          update personas set deleted_at = ${now}::timestamptz
          where id = ${id} and account_id = ${principal.accountId} and deleted_at is null
          returning id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* personaNotFound(id, "id")
        return { id, deleted: true as const }
      })

      const personasOfAccount = Effect.fnUntraced(function* (accountId: string, limit: number) {
        const rows = yield* sql<PersonaRow>`
          select ${sql.literal(personaColumns)} from personas where account_id = ${accountId} and deleted_at is null
          order by created_at desc, id desc limit ${limit}`.pipe(Effect.orDie)
        return rows.map(renderPersona)
      })

      return Personas.of({ create, get, list, remove, personasOfAccount })
    })
  )
}
