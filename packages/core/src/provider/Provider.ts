/**
 * The provider port: where generation actually happens. The HTTP adapter for the Suno-style
 * upstream (`PROVIDER=http`) implements it, and so will the built-in engine. Every method
 * answers an outcome and never fails: a time-out or a broken connection is `Unknown`, which the
 * caller reconciles, never a guess.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type {
  ExportFormat,
  ExportPollOutcome,
  ExportSubmission,
  PersonaOutcome,
  PersonaSubmission,
  PollOutcome,
  ProviderCallback,
  ProviderSubmission,
  SubmitOutcome
} from "./outcomes.ts"

export class Provider extends Context.Service<
  Provider,
  {
    /** A short label for logs (`http`, `engine`). */
    readonly name: string
    /** Hands one task to the provider. */
    readonly submit: (submission: ProviderSubmission) => Effect.Effect<SubmitOutcome>
    /** Asks where a task the provider accepted stands. */
    readonly poll: (providerTaskId: string) => Effect.Effect<PollOutcome>
    /** Hands one export (WAV, MIDI, stems, timed lyrics of a track) to the provider. */
    readonly submitExport: (submission: ExportSubmission) => Effect.Effect<SubmitOutcome>
    /** Asks where an export the provider accepted stands; the format names the upstream's endpoint. */
    readonly pollExport: (providerExportId: string, format: ExportFormat) => Effect.Effect<ExportPollOutcome>
    /** Makes a persona from a track, at once (free; nothing to poll). */
    readonly createPersona: (submission: PersonaSubmission) => Effect.Effect<PersonaOutcome>
    /** Reads a callback body; null when it is not one. Nothing in it is trusted beyond "look now". */
    readonly parseCallback: (body: unknown) => ProviderCallback | null
  }
>()("lyre/core/provider/Provider") {}
