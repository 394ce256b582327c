/** The demo for Hono on Node (`npm run demo -- hono`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp, serveAppWithLogin } from './serve.js';

// `npm run demo -- hono login`: signs in to the example app through a local login server, printing the user id.
if (process.argv.slice(2).includes('login')) {
  const { runLoginDemo } = await import('@kyb-webhooks/example-shared/login-demo');
  await runLoginDemo('Hono', serveAppWithLogin);
} else {
  await runDemo('Hono', serveApp);
}
