/**
 * What the core's tests borrow from the other packages of the workspace, in one place: the test kit
 * (`@kyb-webhooks/testing`: signer, fixtures, JWKS server, service, adapter conformance suite) and the client's
 * `KybApiError`. Both packages depend on the core, so the core cannot depend on them by name; its tests import their
 * sources through this file instead of each reaching into another package's `src`.
 */
export * from '../testing/src/index.js';
export {
  expectConfigInvalid,
  runAdapterConformance,
  runAdapterOptionCases,
  serveFetchOnLoopback,
} from '../testing/src/adapter-suite/index.js';
export { KybApiError } from '../client/src/errors.js';
