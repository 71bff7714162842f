// Deterministic randomness. Every random choice in the engine flows from one of these
// generators, seeded from a hash of (taskId, take index, request), so the same request
// and task id always give the same bytes. Math.random and clocks are never used.

/** cyrb128: a fast 128-bit string hash, good enough to spread similar ids apart. */
export function hash128(text: string): [number, number, number, number] {
  let h1 = 1779033703,
    h2 = 3144134277,
    h3 = 1013904242,
    h4 = 2773480762
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i)
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067)
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233)
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213)
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179)
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067)
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233)
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213)
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179)
  h1 ^= h2 ^ h3 ^ h4
  h2 ^= h1
  h3 ^= h1
  h4 ^= h1
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0]
}

/** sfc32 generator with a few convenience draws. */
export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: string) {
    const [a, b, c, d] = hash128(seed)
    this.a = a
    this.b = b
    this.c = c
    this.d = d
    // Discard the first outputs: sfc32 needs a few rounds to mix a fresh state.
    for (let i = 0; i < 12; i++) this.next()
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.a >>>= 0
    this.b >>>= 0
    this.c >>>= 0
    this.d >>>= 0
    let t = (this.a + this.b) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.d = (this.d + 1) | 0
    t = (t + this.d) | 0
    this.c = (this.c + t) | 0
    return (t >>> 0) / 4294967296
  }

  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next()
  }

  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: ReadonlyArray<T>): T {
    if (items.length === 0) throw new Error("pick from empty list")
    return items[Math.floor(this.next() * items.length)] as T
  }

  /** A 32-bit seed for a sub-generator such as a noise source. */
  seed32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0 || 1
  }

  /** An independent child stream, so adding draws in one part does not shift another. */
  fork(label: string): Rng {
    return new Rng(`${label}:${this.seed32()}`)
  }
}
