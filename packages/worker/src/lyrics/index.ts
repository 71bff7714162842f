export * from "./LyricsWorker.ts"
export * from "./BuiltInLyricsWriter.ts"
export * from "./ChatLyricsWriter.ts"
export * from "./SunoLyricsWriter.ts"
