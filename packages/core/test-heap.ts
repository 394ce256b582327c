/**
 * Heap after full collections, for the core's memory tests (receiver.memory.test.ts, memory-store.memory.test.ts):
 * Bun's own collector on Bun (JavaScriptCore), V8's `gc` exposed at run time on Node and Deno.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

function collector(): () => void {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun) return () => bun.gc(true);
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const gc = collector();

/** Bytes of heap in use after two full collections (the second catches what the first's finalizers freed). */
export function heapAfterCollection(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
