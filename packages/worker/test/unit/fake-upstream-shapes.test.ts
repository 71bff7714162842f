/**
 * The fake upstream models the upstream on its own, with no Lyre dependency; the worker reads the
 * upstream's `callbackType` as core's CallbackStage as it stands (sunoCallback.ts). This check,
 * made by the type checker, keeps the stages the fake sends equal to those core knows.
 */
import { describe, expectTypeOf, it } from "vitest"
import type { CallbackStage } from "@lyre/core/provider/outcomes"
import type { CallbackStage as FakeCallbackStage } from "@lyre/fake-upstream"

describe("the fake upstream's shapes are core's", () => {
  it("a callback's stages", () => {
    expectTypeOf<FakeCallbackStage>().toEqualTypeOf<CallbackStage>()
  })
})
