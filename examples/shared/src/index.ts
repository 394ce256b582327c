export { registerDemoHandlers, type Activity } from './handlers.js';
export { runDemoScenario, formatScenarioTable, type ScenarioRow, type DemoApp } from './scenario.js';
export { receiverFromEnv, port } from './config.js';
export { runDemo, listening, type ServedApp, type DemoStore, type DemoResult } from './demo.js';
export { runStreamScenario, type StreamScenarioResult } from './streams.js';
