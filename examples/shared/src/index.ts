export { registerDemoHandlers, type Activity } from './handlers.js';
export { runDemoScenario, formatScenarioTable, type ScenarioRow, type DemoApp } from './scenario.js';
export { receiverFromEnv, port } from './config.js';
export { runDemo, listening, type ServedApp, type DemoStore } from './demo.js';
