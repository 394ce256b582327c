/**
 * Exit codes of the command, documented in the README: scripts and CI jobs branch on them.
 *
 * @example
 * ```ts
 * process.exitCode = result.ok ? EXIT.ok : EXIT.failed
 * ```
 */
export const EXIT = {
  /** Everything ran and every check or expectation held. */
  ok: 0,
  /** A check or expectation failed: the app answered something a correct receiver does not, a capture does not verify, the app could not be reached. */
  failed: 1,
  /** The command line was wrong: unknown command, option or value. Nothing was sent. */
  usage: 2,
} as const;

/**
 * An error the user can fix, with the fix in the message. The CLI prints the message (never a stack) and exits with
 * `exitCode`. Messages never contain a secret, a token or body text.
 *
 * @example
 * ```ts
 * throw new CliError('--seq must be an integer ≥ 0, e.g. --seq 3', EXIT.usage)
 * ```
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: number;

  constructor(message: string, exitCode: number = EXIT.failed) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * A usage mistake (exit code 2).
 *
 * @example
 * ```ts
 * if (!url.startsWith('http')) throw usageError('--to must be an http(s) URL, e.g. --to http://127.0.0.1:3000/webhooks/kyb')
 * ```
 */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}
