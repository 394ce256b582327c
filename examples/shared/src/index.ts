export { registerDemoHandlers, type Activity } from './handlers.js';
export { runDemoScenario, formatScenarioTable, type ScenarioRow } from './scenario.js';
export { receiverFromEnv, port } from './config.js';
export { runDemo, listening, type ServedApp } from './demo.js';
