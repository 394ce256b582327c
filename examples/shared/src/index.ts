export { registerDemoHandlers, type Activity } from './handlers.js';
export { runDemoScenario, formatScenarioTable, type ScenarioRow, type DemoApp } from './scenario.js';
export { receiverFromEnv, exampleReceiver, port, type ExampleReceiver } from './config.js';
export { runDemo, listening, type ServedApp, type DemoStore, type DemoOptions, type DemoResult } from './demo.js';
export {
  queueFlag,
  openQueue,
  startWorker,
  trackQueue,
  QUEUE_ENGINES,
  type QueueEngine,
  type ExampleQueue,
  type TrackedQueue,
} from './queue.js';
export { runStreamScenario, type StreamScenarioResult } from './streams.js';
export {
  loginFromEnv,
  exitWith,
  orExit,
  homePage,
  accountPage,
  userIdOnPage,
  LOGIN_ENV,
  SIGN_IN_PATH,
  type ExampleLogin,
  type LoginEnvName,
} from './login.js';
export { listenThenMount, type ServeWithLogin, type ServedLoginApp } from './listen-then-mount.js';
// The login demo (runLoginDemo) is `@kyb-webhooks/example-shared/login-demo`: it loads oidc-provider, which the webhook
// demo and the apps have no use for.
