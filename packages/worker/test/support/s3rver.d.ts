/** The part of `@20minutes/s3rver` (a JavaScript package without types) that the tests use. */
declare module "@20minutes/s3rver" {
  import type { AddressInfo } from "node:net"

  interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory?: string
    readonly configureBuckets?: ReadonlyArray<{ readonly name: string }>
  }

  export default class S3rver {
    constructor(options: S3rverOptions)
    run(): Promise<AddressInfo>
    close(): Promise<void>
  }
}
