/**
 * The login conformance suite: the same cases over real HTTP for every framework mount. Each framework's test file
 * supplies `mount` (see testing/apps.ts), which attaches the app of the same routes to an already listening server.
 * The cases are in testing/conformance/, one file per part of the routes' job.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { ConformanceSuite, startApp, type MountApp } from './conformance/app.js';
import { bindingCases } from './conformance/binding.js';
import { callbackRefusedCases } from './conformance/callback-refused.js';
import { errorAnswerCases } from './conformance/error-answers.js';
import { pendingLoginCases } from './conformance/pending-logins.js';
import { requireUserCases } from './conformance/require-user.js';
import { signInCases } from './conformance/sign-in.js';
import { signOutCases } from './conformance/sign-out.js';

export { startApp, type MountApp, type RunningApp } from './conformance/app.js';

/** Runs the shared cases against one framework. */
export function loginConformanceSuite(framework: string, mount: MountApp): void {
  describe(`login routes on ${framework}`, () => {
    // One app for all the cases: each case makes its own browser (UserAgent) and reads only what it caused.
    const suite = new ConformanceSuite(mount);
    beforeAll(async () => {
      suite.app = await startApp(mount);
    });
    afterAll(() => suite.app?.stop());

    signInCases(suite);
    callbackRefusedCases(suite);
    bindingCases(suite);
    pendingLoginCases(suite);
    requireUserCases(suite);
    signOutCases(suite);
    errorAnswerCases(suite);
  });
}
