/** The demo for Koa (`npm run demo -- koa`): the example app, the shared scenario and its table. */
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp, serveAppWithLogin } from './serve.js';

// `npm run demo -- koa login`: signs in to the example app through a local login server, printing the user id.
if (process.argv.slice(2).includes('login')) {
  const { runLoginDemo } = await import('@kyb-webhooks/example-shared/login-demo');
  await runLoginDemo('Koa', serveAppWithLogin);
} else {
  await runDemo('Koa', serveApp);
}
