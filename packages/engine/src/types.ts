// Public request/response shapes of the engine. Kept free of runtime code so that
// the worker, the pool and the callers can share them without pulling in the synth.

export type ModelName = "aether" | "echo" | "nocturne"

export interface EngineRequest {
  readonly style: string
  readonly title: string
  readonly lyrics: string | null
  readonly instrumental: boolean
  readonly model: ModelName
  readonly vocal_gender?: "m" | "f" | undefined
  readonly negative_tags?: string | undefined
  readonly style_weight?: number | undefined
  readonly weirdness_constraint?: number | undefined
  readonly audio_weight?: number | undefined
}

export interface EngineTrack {
  readonly index: number
  readonly mp3: Uint8Array
  readonly png: Uint8Array
  readonly duration: number
  readonly title: string
  readonly lyrics: string | null
  readonly tags: string
}

export interface Engine {
  render(request: EngineRequest, taskId: string): Promise<ReadonlyArray<EngineTrack>>
  close(): Promise<void>
}

/** Internal knobs, used by tests and the benchmark; never needed by the service. */
export interface RenderOptions {
  /** Cut the song after this many seconds (with a short fade), to keep tests fast. */
  readonly maxSeconds?: number | undefined
  /** Leave the singing voice out of the mix (tests measure what the voice contributes). */
  readonly muteVoice?: boolean | undefined
}
