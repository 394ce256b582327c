/**
 * OpenTelemetry traces and metrics for `@kyb-webhooks/core`: pass `openTelemetry()` as the receiver's `telemetry`.
 */
export { openTelemetry, type OpenTelemetryOptions } from './open-telemetry.js';
export { ATTRIBUTES, METRICS, MESSAGING_SYSTEM, UNAUTHENTICATED_SPAN_NAME } from './names.js';
export { INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION } from './version.js';
