#!/usr/bin/env node
import { run } from "./program.ts"

process.exitCode = await run(process.argv, {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin
})
