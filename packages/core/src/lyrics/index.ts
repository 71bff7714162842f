export * from "./Lyrics.ts"
export * from "./LyricsWriter.ts"
export * from "./model.ts"
export * from "./rules.ts"
