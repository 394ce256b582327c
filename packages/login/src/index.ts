export {
  createLogin,
  type Login,
  type LoginRequest,
  type LoginResult,
  type LoginStart,
  type LoginTokens,
} from './login.js';
export { type LoginOptions } from './options.js';
export { KybLoginError, LOGIN_ERRORS, type LoginErrorCode } from './errors.js';
export { safeReturnPath } from './return-path.js';
export { userIdFromSubject, type VerifiedClaims, type VerifiedUser } from './tokens.js';
export { memoryTransactionStore, type LoginTransaction, type TransactionStore } from './transaction-store.js';
export {
  LoginRoutes,
  isAuthenticatedUser,
  type AuthenticatedUser,
  type LoginResponse,
  type LoginRoutesOptions,
  type RequireUserOptions,
} from './routes.js';
