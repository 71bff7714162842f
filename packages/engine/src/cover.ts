// Cover art drawn from the title and style: a genre-tinted gradient, a motif chosen by
// genre (sun and grid, rings, bars, bokeh), a waveform seeded by the title, and the
// title itself in a small pixel font.

import { encodePng } from "./png.ts"
import { Rng } from "./rng.ts"

const SIZE = 512

/** 5x7 pixel font: each glyph is 7 rows of 5 bits (MSB = left). */
const FONT: Readonly<Record<string, ReadonlyArray<number>>> = {
  A: [14, 17, 17, 31, 17, 17, 17],
  B: [30, 17, 17, 30, 17, 17, 30],
  C: [14, 17, 16, 16, 16, 17, 14],
  D: [30, 17, 17, 17, 17, 17, 30],
  E: [31, 16, 16, 30, 16, 16, 31],
  F: [31, 16, 16, 30, 16, 16, 16],
  G: [14, 17, 16, 23, 17, 17, 15],
  H: [17, 17, 17, 31, 17, 17, 17],
  I: [14, 4, 4, 4, 4, 4, 14],
  J: [7, 2, 2, 2, 2, 18, 12],
  K: [17, 18, 20, 24, 20, 18, 17],
  L: [16, 16, 16, 16, 16, 16, 31],
  M: [17, 27, 21, 21, 17, 17, 17],
  N: [17, 17, 25, 21, 19, 17, 17],
  O: [14, 17, 17, 17, 17, 17, 14],
  P: [30, 17, 17, 30, 16, 16, 16],
  Q: [14, 17, 17, 17, 21, 18, 13],
  R: [30, 17, 17, 30, 20, 18, 17],
  S: [15, 16, 16, 14, 1, 1, 30],
  T: [31, 4, 4, 4, 4, 4, 4],
  U: [17, 17, 17, 17, 17, 17, 14],
  V: [17, 17, 17, 17, 17, 10, 4],
  W: [17, 17, 17, 21, 21, 21, 10],
  X: [17, 17, 10, 4, 10, 17, 17],
  Y: [17, 17, 10, 4, 4, 4, 4],
  Z: [31, 1, 2, 4, 8, 16, 31],
  "0": [14, 17, 19, 21, 25, 17, 14],
  "1": [4, 12, 4, 4, 4, 4, 14],
  "2": [14, 17, 1, 2, 4, 8, 31],
  "3": [31, 2, 4, 2, 1, 17, 14],
  "4": [2, 6, 10, 18, 31, 2, 2],
  "5": [31, 16, 30, 1, 1, 17, 14],
  "6": [6, 8, 16, 30, 17, 17, 14],
  "7": [31, 1, 2, 4, 8, 8, 8],
  "8": [14, 17, 17, 14, 17, 17, 14],
  "9": [14, 17, 17, 15, 1, 2, 12],
  " ": [0, 0, 0, 0, 0, 0, 0],
  "!": [4, 4, 4, 4, 4, 0, 4],
  "?": [14, 17, 1, 2, 4, 0, 4],
  ".": [0, 0, 0, 0, 0, 12, 12],
  ",": [0, 0, 0, 0, 12, 4, 8],
  "'": [4, 4, 8, 0, 0, 0, 0],
  "-": [0, 0, 0, 31, 0, 0, 0],
  "&": [12, 18, 20, 8, 21, 18, 13]
}

type Rgb = [number, number, number]

const GENRE_HUES: Readonly<Record<string, number>> = {
  synthwave: 300,
  "lofi hip hop": 30,
  ambient: 200,
  metal: 0,
  rock: 10,
  jazz: 45,
  orchestral: 220,
  folk: 90,
  country: 35,
  house: 260,
  techno: 180,
  trance: 230,
  pop: 330,
  "hip hop": 50,
  trap: 280,
  "drum and bass": 160,
  blues: 215,
  reggae: 120,
  funk: 20,
  "r&b": 340
}

function hsl(h: number, s: number, l: number): Rgb {
  const a = s * Math.min(l, 1 - l)
  const f = (n: number): number => {
    const k = (n + h / 30) % 12
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))))
  }
  return [f(0), f(8), f(4)]
}

export function drawCover(title: string, style: string, genre: string, take = 0): Uint8Array {
  // Title and style decide the picture; each take gets its own variation of it.
  const rng = new Rng(`cover|${title}|${style}|${take}`)
  const img = new Uint8Array(SIZE * SIZE * 3)
  const hue = ((GENRE_HUES[genre] ?? rng.int(0, 359)) + rng.int(-25, 25) + 360) % 360
  const top = hsl(hue, 0.55, 0.12 + rng.next() * 0.1)
  // Both ends stay near the genre's hue so the palette reads as that genre.
  const bottom = hsl((hue + rng.int(-35, 35) + 360) % 360, 0.65, 0.3 + rng.next() * 0.15)
  const accent = hsl((hue + 180 + rng.int(-30, 30)) % 360, 0.8, 0.6)
  const put = (x: number, y: number, c: Rgb, alpha: number): void => {
    if (x < 0 || y < 0 || x >= SIZE || y >= SIZE) return
    const o = (y * SIZE + x) * 3
    img[o] = Math.round((img[o] as number) * (1 - alpha) + c[0] * alpha)
    img[o + 1] = Math.round((img[o + 1] as number) * (1 - alpha) + c[1] * alpha)
    img[o + 2] = Math.round((img[o + 2] as number) * (1 - alpha) + c[2] * alpha)
  }
  for (let y = 0; y < SIZE; y++) {
    const t = y / (SIZE - 1)
    for (let x = 0; x < SIZE; x++) {
      const o = (y * SIZE + x) * 3
      img[o] = Math.round(top[0] + (bottom[0] - top[0]) * t)
      img[o + 1] = Math.round(top[1] + (bottom[1] - top[1]) * t)
      img[o + 2] = Math.round(top[2] + (bottom[2] - top[2]) * t)
    }
  }
  const motif =
    genre === "synthwave" || genre === "trance"
      ? "sun"
      : genre === "techno" || genre === "house" || genre === "metal"
        ? "rings"
        : genre === "ambient" || genre === "orchestral" || genre === "lofi hip hop"
          ? "bokeh"
          : rng.pick(["sun", "rings", "bokeh", "bars"] as const)
  const cx = SIZE / 2 + rng.int(-60, 60)
  const cy = SIZE * 0.42 + rng.int(-40, 40)
  if (motif === "sun") {
    const rad = 110 + rng.int(0, 40)
    for (let y = Math.floor(cy - rad); y <= cy + rad; y++) {
      // Horizontal cuts through the lower half of the sun: the retro look.
      if (y > cy && Math.floor((y - cy) / 9) % 2 === 1) continue
      for (let x = Math.floor(cx - rad); x <= cx + rad; x++) {
        const d = Math.hypot(x - cx, y - cy)
        if (d <= rad) put(x, y, hsl((hue + 60 * ((y - cy + rad) / (2 * rad))) % 360, 0.9, 0.6), 0.9)
      }
    }
    for (let y = Math.floor(SIZE * 0.68); y < SIZE; y += 14) for (let x = 0; x < SIZE; x++) put(x, y, accent, 0.5)
    for (let k = -10; k <= 10; k++)
      for (let y = Math.floor(SIZE * 0.68); y < SIZE; y++)
        put(Math.round(SIZE / 2 + k * (y - SIZE * 0.6) * 0.5), y, accent, 0.5)
  } else if (motif === "rings") {
    const n = rng.int(5, 10)
    for (let y = 0; y < SIZE; y++)
      for (let x = 0; x < SIZE; x++) {
        const d = Math.hypot(x - cx, y - cy)
        const ring = Math.abs(((d / (160 / n)) % 1) - 0.5)
        if (d < 200 && ring < 0.08) put(x, y, accent, 0.7 * (1 - d / 200))
      }
  } else if (motif === "bokeh") {
    for (let k = 0; k < 28; k++) {
      const bx = rng.int(0, SIZE),
        by = rng.int(0, SIZE),
        br = rng.int(8, 46)
      const c = hsl((hue + rng.int(-40, 80) + 360) % 360, 0.7, 0.65)
      for (let y = by - br; y <= by + br; y++)
        for (let x = bx - br; x <= bx + br; x++) {
          const d = Math.hypot(x - bx, y - by)
          if (d <= br) put(x, y, c, 0.22 * (1 - (d / br) * 0.5))
        }
    }
  } else {
    const bars = rng.int(16, 40)
    const w = SIZE / bars
    for (let b = 0; b < bars; b++) {
      const h = 40 + rng.next() * 220
      for (let y = Math.floor(SIZE * 0.75 - h); y < SIZE * 0.75; y++)
        for (let x = Math.floor(b * w + 2); x < (b + 1) * w - 2; x++) put(x, y, accent, 0.55)
    }
  }
  // A waveform line across the middle, shaped by the title's hash.
  const f1 = rng.range(2, 6),
    f2 = rng.range(7, 15),
    amp = rng.range(14, 34)
  for (let x = 0; x < SIZE; x++) {
    const u = x / SIZE
    const y = Math.round(SIZE * 0.62 + amp * Math.sin(u * Math.PI * 2 * f1) * Math.sin(u * Math.PI * f2 + 1))
    for (let t = -1; t <= 1; t++) put(x, y + t, [245, 245, 245], 0.75)
  }
  drawTitle(title, put)
  return encodePng(SIZE, SIZE, img)
}

function drawTitle(title: string, put: (x: number, y: number, c: Rgb, a: number) => void): void {
  const text = title
    .toUpperCase()
    .normalize("NFD")
    .replace(/[^A-Z0-9 !?.,'&-]/g, "")
    .trim()
  // Wrap into up to 3 lines that fit the width at the chosen scale.
  const scale = text.length <= 12 ? 6 : text.length <= 28 ? 4 : 3
  const perLine = Math.floor((SIZE - 48) / (6 * scale))
  const words = text.split(/\s+/)
  const lines: string[] = []
  let cur = ""
  for (const w of words) {
    const next = cur === "" ? w : `${cur} ${w}`
    if (next.length <= perLine) cur = next
    else {
      if (cur !== "") lines.push(cur)
      cur = w.slice(0, perLine)
    }
  }
  if (cur !== "") lines.push(cur)
  const shown = lines.slice(0, 3)
  const y0 = SIZE - 40 - shown.length * 9 * scale
  shown.forEach((line, li) => {
    const x0 = 24
    for (let c = 0; c < line.length; c++) {
      const glyph = FONT[line[c] ?? " "] ?? FONT[" "] ?? []
      for (let row = 0; row < 7; row++) {
        const bits = glyph[row] ?? 0
        for (let col = 0; col < 5; col++) {
          if (((bits >> (4 - col)) & 1) === 0) continue
          for (let dy = 0; dy < scale; dy++)
            for (let dx = 0; dx < scale; dx++) {
              const x = x0 + (c * 6 + col) * scale + dx
              const y = y0 + li * 9 * scale + row * scale + dy
              put(x + 2, y + 2, [0, 0, 0], 0.5)
              put(x, y, [250, 250, 250], 1)
            }
        }
      }
    }
  })
}
