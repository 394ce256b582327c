/*
 * The HMAC keyring option of createReceiver (`secrets`, spec 5.7), beside the signature check that uses it: which
 * keys are versions, what a secret may be, when a version ends. Its messages never show a key that may be a secret
 * pasted in the wrong place.
 */
import { checkFields, rule, type FieldsSpec } from '../option-validation.js';
import { strayWhitespaceProblem } from '../option-rules.js';
import { describeValue, isPlainObject, ordinal } from '../option-words.js';
import { NOT_AFTER_MIN_MS, SECRET_VERSION } from './signature.js';

const SECRETS_EXAMPLE = "secrets: { '3': process.env.KYB_SECRET_V3 }";
const ENV_UNSET = 'the environment variable it is read from is probably unset';

const notAfterRule = rule((value) => {
  const fix = 'pass a Date or Unix milliseconds, e.g. `notAfter: Date.now() + 24 * 3600_000`';
  if (value instanceof Date) {
    return Number.isNaN(value.getTime())
      ? `is an Invalid Date, so this version would never end: ${fix}.`
      : secondsProblem(value.getTime());
  }
  if (typeof value === 'number') {
    return Number.isFinite(value)
      ? secondsProblem(value)
      : `is ${describeValue(value)}, so this version would never end: ${fix}.`;
  }
  if (typeof value === 'string') {
    return `is a string, which is not parsed (a duration such as '24h' would never end the version): ${fix}, or \`new Date('2026-01-02T00:00:00Z')\`.`;
  }
  return `must be a Date or Unix milliseconds, got ${describeValue(value)}: ${fix}.`;
});

/** Read as milliseconds, an end in seconds falls in 1970 and every delivery of the version would be refused. */
function secondsProblem(ms: number): string | undefined {
  return ms < NOT_AFTER_MIN_MS
    ? 'is before 1973: notAfter is Unix milliseconds or a Date; this looks like seconds: multiply by 1000.'
    : undefined;
}

function secretValueProblem(value: unknown): string | undefined {
  if (typeof value === 'string') {
    if (value.length === 0)
      return `is empty: ${ENV_UNSET} or empty. Set it from the dashboard, or remove this version.`;
    if (value.trim() === '')
      return 'is blank (whitespace only): set the secret shown in the dashboard, or remove this version.';
    // No dashboard secret begins or ends with whitespace; a newline from a secrets file or a pasted space would make
    // every delivery of this version fail with signature_mismatch, far from its cause.
    return strayWhitespaceProblem(value, 'process.env.KYB_SECRET_V1?.trim()');
  }
  if (value === undefined || value === null) {
    return `is ${describeValue(value)}: ${ENV_UNSET}. Set it from the dashboard, or remove this version.`;
  }
  return undefined;
}

const secretVersionFields: FieldsSpec = {
  options: {
    secret: rule(
      (value) =>
        secretValueProblem(value) ??
        (typeof value === 'string'
          ? undefined
          : `must be a string (the endpoint secret), got ${describeValue(value)}.`),
      {
        missing: `${ENV_UNSET}. Set it from the dashboard, or remove this version.`,
      },
    ),
    notAfter: notAfterRule,
  },
  aliases: {
    value: 'secret',
    key: 'secret',
    expires: 'notAfter',
    expiresAt: 'notAfter',
    validUntil: 'notAfter',
    until: 'notAfter',
    notAfterMs: 'notAfter',
    expiry: 'notAfter',
  },
};

/**
 * The rule of `createReceiver`'s `secrets`: an object of versions (the `kv` of the signature header) to secrets, each
 * a string or `{ secret, notAfter }`. Its messages describe a key that is not a version by its position, never show
 * it, and tell an empty or blank secret (an unset environment variable) from one with stray whitespace.
 *
 * @example
 * ```ts
 * validateOptions(options, {
 *   owner: 'createReceiver',
 *   example: 'createReceiver({ secrets })',
 *   options: { secrets: secretsRule },
 * })
 * ```
 */
export const secretsRule = rule((value, path, report) => {
  if (!isPlainObject(value)) {
    const hint = typeof value === 'string' ? ' (one secret needs its version as the key)' : '';
    return `must be an object of secret versions${hint}, e.g. \`${SECRETS_EXAMPLE}\`; got ${describeValue(value)}.`;
  }
  const versions = Object.keys(value);
  if (versions.length === 0) {
    return `is empty, which would turn the HMAC check off: add a version (\`${SECRETS_EXAMPLE}\`), or remove \`secrets\` to verify attestations only.`;
  }
  versions.forEach((version, index) => {
    // A key that is not a version may be a secret pasted in the wrong place, so it is described, never shown.
    if (!SECRET_VERSION.test(version)) {
      report(
        path,
        `has a key (the ${ordinal(index + 1)}, not shown) that is not a secret version: a version is the kv of the signature header, ` +
          `1 to 64 letters, digits, '.', '_' or '-', e.g. '3'. Put the secret in the value: \`${SECRETS_EXAMPLE}\`.`,
      );
      return;
    }
    // Versions are short ('3', 'v2', '2026-01'); a long key is described by its position, in case it is a secret.
    const entryPath = version.length <= 20 ? `${path}['${version}']` : `${path}[<the ${ordinal(index + 1)} key>]`;
    const entry = value[version];
    if (isPlainObject(entry)) {
      checkFields(entry, secretVersionFields, entryPath, report);
      return;
    }
    const problem =
      secretValueProblem(entry) ??
      (typeof entry === 'string'
        ? undefined
        : `must be the secret (a string) or { secret, notAfter }, got ${describeValue(entry)}.`);
    if (problem !== undefined) report(entryPath, problem);
  });
  return undefined;
});
