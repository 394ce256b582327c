/**
 * The KYB service API, typed (issue 12 §1). Work in progress: see packages/client/README.md.
 */
export {};
