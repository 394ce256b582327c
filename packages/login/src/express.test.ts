import { mountExpress } from './testing/apps.js';
import { loginConformanceSuite } from './testing/conformance.js';

// The shared login cases (testing/conformance.ts) over real HTTP, on the app of testing/apps.ts.
loginConformanceSuite('Express', mountExpress);
