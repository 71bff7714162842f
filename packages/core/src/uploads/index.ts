export * from "./model.ts"
export * from "./rows.ts"
export * from "./UploadFiles.ts"
export * from "./Uploads.ts"
