// The tracer's and the meter's name and version: the package's own, read from its package.json (inlined by the build).
import packageJson from '../package.json' with { type: 'json' };

/** The instrumentation scope's name: the package's. */
export const INSTRUMENTATION_NAME: string = packageJson.name;
/** The instrumentation scope's version: the package's. */
export const INSTRUMENTATION_VERSION: string = packageJson.version;
