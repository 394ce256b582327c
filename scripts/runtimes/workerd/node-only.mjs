// Stands in for packages/core/src/verify/crypto/node.ts in the workerd bundle: the node:crypto fast path does not exist
// there. Rows of a describe.each/it.each that carry it are skipped and counted by vitest-shim.mjs; a test that hands
// it to the core anyway is reported as "needs node:" (node-stub.mjs).
import { stub } from './node-stub.mjs';

export const NODE_ONLY = stub('the node:crypto path (packages/core/src/verify/crypto/node.ts)');
export const platformCrypto = NODE_ONLY;
