export { ContentCredentials, ContentCredentialsError, isSigned, mediaTypeOf } from "./ContentCredentials.ts"
export type { FileToSign, SignedFile } from "./ContentCredentials.ts"
export { agentOf, digitalSourceTypeOf, disclosureOf, manifestOf } from "./origin.ts"
export type { FileOrigin, FileWork, ProductInfo } from "./origin.ts"
