/*
 * The `kyb-webhooks` command (bin). Everything lives in program.ts and commands/; this file only runs it and sets
 * the exit code, letting open handles close on their own so output is flushed.
 */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv);
