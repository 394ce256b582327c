// Temporary: the importers move to types.ts and receive.ts once the core's entry points settle.
export * from './types.js';
export { createOrderedReceive } from './receive.js';
