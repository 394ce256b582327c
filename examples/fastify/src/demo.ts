/** The demo for Fastify (`npm run demo -- fastify`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp, serveAppWithLogin } from './serve.js';

// `npm run demo -- fastify login`: signs in to the example app through a local login server, printing the user id.
if (process.argv.slice(2).includes('login')) {
  const { runLoginDemo } = await import('@kyb-webhooks/example-shared/login-demo');
  await runLoginDemo('Fastify', serveAppWithLogin);
} else {
  await runDemo('Fastify', serveApp);
}
