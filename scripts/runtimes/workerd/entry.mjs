// The workerd test worker: GET /run runs the bundled suites with vitest's runner inside a request (workerd allows
// timers, fetch and crypto only there) and answers with JSON results. Built by scripts/runtimes/workerd.mjs.
import { startTests } from '@vitest/runner';
import { setState } from '@vitest/expect';
import { SUITES, platformCrypto } from 'kyb:suites';
import { MARKER, touched } from './node-stub.mjs';
import { expect, skipped } from './vitest-shim.mjs';

const config = {
  root: '/',
  setupFiles: [],
  name: 'workerd',
  passWithNoTests: false,
  testNamePattern: undefined,
  allowOnly: false,
  sequence: { shuffle: false, concurrent: false, seed: 0, hooks: 'stack', setupFiles: 'list' },
  chaiConfig: undefined,
  maxConcurrency: 5,
  testTimeout: 20_000,
  hookTimeout: 60_000,
  retry: 0,
  includeTaskLocation: false,
  tags: [],
  tagsFilter: undefined,
  strictTags: false,
};

class WorkerdRunner {
  config = config;
  importFile(filepath) {
    return SUITES[filepath]();
  }
  onBeforeTryTask(test) {
    setState(
      {
        assertionCalls: 0,
        isExpectingAssertions: false,
        isExpectingAssertionsError: null,
        expectedAssertionsNumber: null,
        expectedAssertionsNumberErrorGen: null,
        currentTestName: test.name,
      },
      expect,
    );
  }
  onAfterTryTask() {
    const {
      assertionCalls,
      expectedAssertionsNumber,
      expectedAssertionsNumberErrorGen,
      isExpectingAssertions,
      isExpectingAssertionsError,
    } = expect.getState();
    if (expectedAssertionsNumber !== null && assertionCalls !== expectedAssertionsNumber)
      throw expectedAssertionsNumberErrorGen();
    if (isExpectingAssertions && assertionCalls === 0) throw isExpectingAssertionsError;
  }
}

function collect(task, path, out) {
  const name = path ? `${path} > ${task.name}` : task.name.replace(/^bundle\//, '');
  if (task.type === 'test') {
    let state = task.result?.state ?? (task.mode === 'skip' || task.mode === 'todo' ? 'skip' : 'not run');
    const errors = (task.result?.errors ?? []).map((error) => String(error.message ?? error).slice(0, 2000));
    // Its scaffolding needed a node: module (node-stub.mjs): it did not really run here, whatever it asserted.
    if (touched.has(task.id) || (state === 'fail' && errors.some((message) => message.includes(MARKER))))
      state = 'node-only';
    out.push({ name, state, errors });
    return;
  }
  if (task.result?.state === 'fail' && task.result.errors?.length) {
    out.push({
      name: `${name} (suite)`,
      state: 'fail',
      errors: task.result.errors.map((error) => String(error.message ?? error).slice(0, 2000)),
    });
  }
  for (const child of task.tasks ?? []) collect(child, name, out);
}

export default {
  async fetch(request) {
    if (new URL(request.url).pathname !== '/run') return new Response('GET /run runs the suites', { status: 404 });
    const tests = [];
    // The core must have picked Web Crypto through the "#crypto" imports map: there is no node:crypto here.
    tests.push({
      name: 'workerd > selects Web Crypto through the package imports map',
      state: platformCrypto.name === 'web' ? 'pass' : 'fail',
      errors: platformCrypto.name === 'web' ? [] : [`picked ${platformCrypto.name}`],
    });
    try {
      const files = await startTests(Object.keys(SUITES), new WorkerdRunner());
      for (const file of files) collect(file, '', tests);
    } catch (error) {
      tests.push({ name: 'runner', state: 'fail', errors: [String(error?.stack ?? error)] });
    }
    return Response.json({ tests, skipped });
  },
};
