// The tracer's and the meter's name and version: the package's own, read from its package.json. Named imports, so the
// build inlines these two strings only, not the whole manifest (its scripts, devDependencies and workspace ranges).
import { name, version } from '../package.json';

/**
 * The instrumentation scope's name: the package's.
 *
 * @example
 * ```ts
 * const ours = spans.filter((span) => span.instrumentationScope.name === INSTRUMENTATION_NAME)
 * ```
 */
export const INSTRUMENTATION_NAME: string = name;
/**
 * The instrumentation scope's version: the package's.
 *
 * @example
 * ```ts
 * console.log(`tracing webhooks with ${INSTRUMENTATION_NAME}@${INSTRUMENTATION_VERSION}`)
 * ```
 */
export const INSTRUMENTATION_VERSION: string = version;
