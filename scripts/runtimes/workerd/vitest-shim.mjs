// The `vitest` module for the workerd run: vitest's own runner (@vitest/runner), assertions (@vitest/expect on
// chai) and spies (@vitest/spy), which are runtime-neutral, without vitest's Node-only worker machinery. Cases that
// need the node:crypto fast path (rows whose value is the NODE_ONLY marker the bundle substitutes for
// `./crypto/node.js`) and the few tests in NODE_ONLY_TESTS are registered as skipped, and counted.
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe as baseDescribe,
  it as baseIt,
  getCurrentTest,
} from '@vitest/runner';
import {
  ASYMMETRIC_MATCHERS_OBJECT,
  GLOBAL_EXPECT,
  JestAsymmetricMatchers,
  JestChaiExpect,
  JestExtend,
  getState,
  setState,
} from '@vitest/expect';
import * as chai from 'chai';
import { fn, spyOn, isMockFunction } from '@vitest/spy';
import { expectTypeOf, assertType } from 'expect-type';
import { NODE_ONLY } from './node-only.mjs';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

export const expect = (value, message) => {
  const { assertionCalls } = getState(expect);
  setState({ assertionCalls: assertionCalls + 1 }, expect);
  const assertion = chai.expect(value, message);
  const test = getCurrentTest();
  return test ? assertion.withTest(test) : assertion;
};
Object.assign(expect, chai.expect);
Object.assign(expect, globalThis[ASYMMETRIC_MATCHERS_OBJECT]);
expect.getState = () => getState(expect);
expect.setState = (state) => setState(state, expect);
expect.extend = (matchers) => chai.expect.extend(expect, matchers);
globalThis[GLOBAL_EXPECT] = expect;
setState(
  {
    assertionCalls: 0,
    isExpectingAssertions: false,
    isExpectingAssertionsError: null,
    expectedAssertionsNumber: null,
    expectedAssertionsNumberErrorGen: null,
  },
  expect,
);

/** Tests (by their own name) skipped on workerd, with why; the runner prints them. */
const NODE_ONLY_TESTS = new Map([
  [
    'selects node:crypto through the package imports map on Node',
    'asserts the Node selection (the workerd entry asserts Web Crypto instead)',
  ],
]);
export const skipped = [];

const hasNodeOnly = (row) => (Array.isArray(row) ? row : [row]).some((value) => value === NODE_ONLY);
function filteredEach(api) {
  return (rows, ...rest) => {
    if (!Array.isArray(rows)) return api.each(rows, ...rest);
    const kept = rows.filter((row) => !hasNodeOnly(row));
    return (name, body, options) => {
      for (const row of rows.filter(hasNodeOnly))
        skipped.push({
          name: `${name} [${String(row[0])}]`,
          reason: 'the node:crypto path, which workerd does not have',
        });
      return kept.length ? api.each(kept)(name, body, options) : undefined;
    };
  };
}
const wrap = (api) =>
  new Proxy(api, {
    get(target, key) {
      return key === 'each' ? filteredEach(target) : target[key];
    },
    apply(target, self, [name, ...rest]) {
      const reason = NODE_ONLY_TESTS.get(name);
      if (!reason) return Reflect.apply(target, self, [name, ...rest]);
      skipped.push({ name, reason });
      return target.skip(name, ...rest);
    },
  });
export const describe = wrap(baseDescribe);
export const it = wrap(baseIt);
export const test = it;
export { afterAll, afterEach, beforeAll, beforeEach, expectTypeOf, assertType };

export const vi = {
  fn,
  spyOn,
  isMockFunction,
  async waitFor(callback, options = {}) {
    const { timeout = 1000, interval = 50 } = typeof options === 'number' ? { timeout: options } : options;
    const started = Date.now();
    for (;;) {
      try {
        return await callback();
      } catch (error) {
        if (Date.now() - started >= timeout) throw error;
        await new Promise((resolve) => setTimeout(resolve, interval));
      }
    }
  },
  restoreAllMocks() {},
  clearAllMocks() {},
};
