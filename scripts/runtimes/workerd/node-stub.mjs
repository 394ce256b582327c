// Stand-ins for what the workerd bundle cannot have: the node: modules the suites' scaffolding imports, and the
// core's node:crypto fast path (./crypto/node.ts). A stand-in can be called, constructed and read from without
// failing at once (so a suite's beforeAll that prepares a node:crypto key still completes and its other tests run),
// and every call gives another stand-in; turning one into data (a string, a number, iterating it) throws an error
// marked NODE_ONLY_SCAFFOLDING. Any test that touches a stand-in while it runs is recorded, and the worker reports it
// as "needs node:", never as passed or failed, whatever its assertions said.
import { getCurrentTest } from '@vitest/runner';

export const MARKER = 'NODE_ONLY_SCAFFOLDING';
/** Ids of the tests that touched a stand-in. */
export const touched = new Set();

function touch() {
  const test = getCurrentTest();
  if (test) touched.add(test.id);
}

export function stub(name) {
  const fail = () => {
    touch();
    throw new Error(`${MARKER}: ${name} is not available on workerd without nodejs_compat`);
  };
  return new Proxy(function () {}, {
    apply: () => (touch(), stub(`${name}()`)),
    construct: () => (touch(), stub(`new ${name}()`)),
    get(_target, key) {
      if (
        key === Symbol.toPrimitive ||
        key === 'toString' ||
        key === 'valueOf' ||
        key === Symbol.iterator ||
        key === 'toJSON'
      )
        return fail;
      if (key === 'then' || typeof key === 'symbol') return undefined; // not a thenable, or `await stub` would hang
      touch();
      return stub(`${name}.${String(key)}`);
    },
    ownKeys: () => ['prototype'],
    has: () => false,
  });
}
