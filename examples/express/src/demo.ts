/**
 * The README's demo (`npm run demo`): the Express example app, the scenario and its table. With `login`
 * (`npm run demo -- login`): signs in to the example app through a local login server instead, printing the user id.
 */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp, serveAppWithLogin } from './serve.js';

if (process.argv.slice(2).includes('login')) {
  const { runLoginDemo } = await import('@kyb-webhooks/example-shared/login-demo');
  await runLoginDemo('Express', serveAppWithLogin);
} else {
  await runDemo('Express', serveApp);
}
