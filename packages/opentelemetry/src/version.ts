// The tracer's and the meter's name and version: the package's own, read from its package.json (inlined by the build).
import packageJson from '../package.json' with { type: 'json' };

/**
 * The instrumentation scope's name: the package's.
 *
 * @example
 * ```ts
 * const ours = spans.filter((span) => span.instrumentationScope.name === INSTRUMENTATION_NAME)
 * ```
 */
export const INSTRUMENTATION_NAME: string = packageJson.name;
/**
 * The instrumentation scope's version: the package's.
 *
 * @example
 * ```ts
 * console.log(`tracing webhooks with ${INSTRUMENTATION_NAME}@${INSTRUMENTATION_VERSION}`)
 * ```
 */
export const INSTRUMENTATION_VERSION: string = packageJson.version;
