export { kybWebhooks } from './handler.js';
export type { KybNodeHandler, KybNodeOptions } from './handler.js';
export { nodeBodySource } from './raw-body.js';
export { closeIfBodyUnread, writeNodeResponse } from './write-response.js';
