/**
 * The provider port, faked: it keeps what it was sent and answers each submission as the test
 * says (accepted by default). Only submission is faked; what these tests never call dies, so a
 * test that reached it would say so rather than pass on an invented answer.
 */
import { Context, Effect, Layer, Ref } from "effect"
import { Provider } from "../../src/index.ts"
import type { ProviderSubmission, SubmitOutcome } from "../../src/index.ts"

export class ProviderScript extends Context.Service<
  ProviderScript,
  {
    /** What every submission is answered with until a test changes it. */
    readonly answer: Ref.Ref<SubmitOutcome>
    readonly submitted: Ref.Ref<ReadonlyArray<ProviderSubmission>>
  }
>()("lyre/core/test/ProviderScript") {
  static readonly layer = Layer.effect(
    ProviderScript,
    Effect.gen(function* () {
      return ProviderScript.of({
        answer: yield* Ref.make<SubmitOutcome>({ _tag: "Accepted", providerTaskId: "up_1" }),
        submitted: yield* Ref.make<ReadonlyArray<ProviderSubmission>>([])
      })
    })
  )
}

const notInTheseTests = (what: string) => Effect.die(new Error(`the fake provider does not ${what}`))

export const fakeProviderLayer: Layer.Layer<Provider | ProviderScript> = Layer.effect(
  Provider,
  Effect.gen(function* () {
    const script = yield* ProviderScript
    return Provider.of({
      name: "fake",
      submit: (submission) =>
        Ref.update(script.submitted, (sent) => [...sent, submission]).pipe(Effect.andThen(Ref.get(script.answer))),
      poll: () => notInTheseTests("poll"),
      submitExport: () => notInTheseTests("take exports"),
      pollExport: () => notInTheseTests("poll exports"),
      createPersona: () => notInTheseTests("make personas"),
      parseCallback: () => null
    })
  })
).pipe(Layer.provideMerge(ProviderScript.layer))
