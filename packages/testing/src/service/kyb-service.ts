import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attestationClaims } from '../attestation.js';
import { ATTESTED_TEST_EVENT_TYPES, TEST_EVENT_TYPES, type TestEventType } from '../event-types.js';
import {
  createTestEvent,
  defaultReleasedAnswers,
  releaseChargeFor,
  type ReleasedAnswerEntry,
  type TestEnvelope,
} from '../fixtures.js';
import { KYB_JWKS_PATH } from '../jwks-server.js';
import { randomHex } from '../random.js';
import { randomSecret } from '../keys.js';
import type { Jwks } from '../keys.js';
import { highestVersion, TEST_AUDIENCE, TEST_ISSUER } from '../signer.js';
import { ulid } from '../ulid.js';
import {
  REAL_RETRY_SCHEDULE,
  createDeliveryEngine,
  type EndpointConfig,
  type ServiceDeliveryAttempt,
} from './delivery.js';
import type { ApiShape } from './api-shape.js';
import {
  RELEASE_PATH_PREFIX,
  SIGNATURE_REQUEST_PATH_PREFIX,
  handleRequest,
  type ApiCall,
  type ApiFault,
} from './http-api.js';
import { createKeyRing } from './key-ring.js';

/**
 * Options of {@link startKybService}; every field has a default.
 *
 * @example
 * ```ts
 * const service = await startKybService({ endpoint: { url: `${origin}/webhooks/kyb` }, timeScale: 1e-5, seqBase: 1 })
 * ```
 */
export interface KybServiceOptions {
  /** The API key every API call must send as `Authorization`; default a random `kyb_test_…`. */
  apiKey?: string;
  /** Attestation `iss`; default {@link TEST_ISSUER}. */
  issuer?: string;
  /** Attestation `aud` (the merchant's client domain UUID); default {@link TEST_AUDIENCE}. */
  audience?: string;
  /** Kid of the first attestation key; default a random `kyb-test-…`. */
  kid?: string;
  /** The merchant's webhook endpoint; without it events queue until {@link KybService.setEndpoint}. */
  endpoint?: EndpointInput;
  /** The seq of a stream's first event: the spec does not show whether it is 0 or 1. Default 0. */
  seqBase?: number;
  /**
   * Multiplies the real retry schedule (10 attempts, 1 min doubling to 256 min, about 8.5 h in all). Default 1e-4
   * (first retry after 6 ms, the whole schedule about 3 s); 1 is real time.
   */
  timeScale?: number;
  /** The real (unscaled) schedule; defaults in {@link REAL_RETRY_SCHEDULE}. */
  retry?: { maxAttempts?: number; baseDelayMs?: number; factor?: number; maxDelayMs?: number };
  /** Consecutive failed attempts, endpoint-wide, before the endpoint is quarantined. Default 20. */
  quarantineAfter?: number;
  /** Timeout of one delivery attempt (not scaled). Default 2000 ms. */
  deliveryTimeoutMs?: number;
  /**
   * Path prefix of data requests' per-request operations (deliveries, events, redeliver; spec: not shown), and of
   * request creation. Default `/api/v1/kyb/data-requests`.
   */
  requestPrefix?: string;
  /** Path prefix of signature requests' per-request operations (spec: not shown). Default `/api/v1/kyb/signature-requests`. */
  signatureRequestPrefix?: string;
  /** How list answers are shaped and paged (spec: not shown); default {@link ApiShape}'s defaults. */
  apiShape?: ApiShape;
  /** Events per page of the events API when the caller sends no `limit`. Default 100; at most 1000 per page. */
  eventsPageLimit?: number;
  /** The merchant's credit in cents; creating a request that costs more fails with 402. Default unlimited. */
  creditCents?: number;
  /** Cost of a signature request in cents. Default 100. */
  signatureRequestCents?: number;
  /** Lifetime of attestations (exp − iat). Default 600 s. */
  attestationTtlSeconds?: number;
  /** Approve votes that release a data request or sign a signature request. Default 1. */
  approvalThreshold?: number;
  /** Fetch used for deliveries; default the global one. */
  fetch?: typeof fetch;
  /** Clock in Unix milliseconds, for `timestamp`, `t`, `iat`. Default `Date.now`. */
  now?: () => number;
}

/**
 * The merchant's endpoint. Secrets default to one random version `'1'`; the numerically highest version signs
 * unless `currentVersion` names another. Unlike the real service (spec 4.3), loopback URLs are allowed: that is
 * where tests listen.
 *
 * @example
 * ```ts
 * service.setEndpoint({ url, secrets: { '1': oldSecret, '2': newSecret } })
 * ```
 */
export interface EndpointInput {
  url: string;
  secrets?: Record<string, string>;
  currentVersion?: string;
}

/**
 * A request's state as the local service holds it (the spec names states only through events, §3).
 *
 * @example
 * ```ts
 * expect(service.request(id)?.state).toBe('released')
 * ```
 */
export interface ServiceRequestSnapshot {
  id: string;
  kind: 'data_request' | 'signature_request' | 'business';
  state: 'pending_approval' | 'released' | 'refused' | 'signed' | 'active';
  costCents: number;
  purged: boolean;
  events: readonly TestEnvelope[];
}

/**
 * Thrown by the control API for what the real service would answer with an error status, e.g. 402
 * `insufficient_credit` when a request cannot be afforded.
 *
 * @example
 * ```ts
 * await expect(service.createDataRequest()).rejects.toMatchObject({ status: 402, code: 'insufficient_credit' })
 * ```
 */
export class KybServiceError extends Error {
  readonly status: number;
  readonly code: string;
  /** Fields the HTTP answer's error object carries beside code and message (the amounts of a 402). */
  readonly details: Record<string, unknown> | undefined;
  constructor(status: number, code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'KybServiceError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/**
 * Options of {@link KybService.createDataRequest}.
 *
 * @example
 * ```ts
 * const id = await service.createDataRequest({ answers: defaultReleasedAnswers(), priceCents: 500 })
 * ```
 */
export interface CreateDataRequestOptions {
  /** The request id (the stream_id); default `dr_<ulid>`. */
  id?: string;
  /** What a release will carry; default {@link defaultReleasedAnswers}. */
  answers?: ReleasedAnswerEntry[];
  /** Reserved amount; default the fixtures' quote (2000 cents). */
  priceCents?: number;
  offerId?: string;
}

/**
 * The local KYB service: a real HTTP server on 127.0.0.1 serving the KYB API and JWKS, delivering events to the
 * merchant's endpoint with the spec's rules, plus a control API for tests. See {@link startKybService}.
 *
 * @example
 * ```ts
 * const id = await service.createDataRequest()
 * await service.release(id)
 * await service.idle()
 * expect(service.attempts().map((a) => a.seq)).toEqual([0, 1])
 * ```
 */
export interface KybService {
  /** `http://127.0.0.1:<port>`: the `{base_url}` of the spec. */
  readonly baseUrl: string;
  readonly jwksUrl: string;
  readonly apiKey: string;
  readonly issuer: string;
  readonly audience: string;
  readonly requestPrefix: string;
  readonly signatureRequestPrefix: string;
  /** How list answers are shaped from now on (see {@link ApiShape}). */
  apiShape: ApiShape;
  /** Kid of the key that signs new attestations. */
  readonly kid: string;
  readonly jwks: Jwks;
  readonly quarantined: boolean;
  /** Requests of the KYB JWKS so far: tests of receivers' key caching count them. */
  readonly jwksRequests: number;
  /** Every API call answered, in order (never the key itself). */
  readonly apiCalls: readonly ApiCall[];
  creditCents: number;
  /** A new key signs from now on; the old ones stay published until {@link KybService.retireKey}. Returns the new kid. */
  rotateKeys(kid?: string): Promise<string>;
  /**
   * Signs any claims as an attestation with the current key (typ, alg and kid as the service sets them): tokens
   * that are genuinely signed but wrong in one claim, for tests of binding checks.
   */
  signToken(claims: Record<string, unknown>): Promise<string>;
  /** Stops publishing an old key; tokens it signed stop verifying once receivers refresh their JWKS. */
  retireKey(kid: string): boolean;
  setEndpoint(endpoint: EndpointInput | undefined): void;
  /** The endpoint's secrets by version (to configure the receiver under test). */
  readonly secrets: Readonly<Record<string, string>>;
  /** Emits `kyb.data_request.pending_approval`; rejects with 402 `insufficient_credit` when unaffordable. */
  createDataRequest(options?: CreateDataRequestOptions): Promise<string>;
  /** Emits `kyb.signature_request.pending_approval`; rejects with 402 `insufficient_credit` when unaffordable. */
  createSignatureRequest(options?: { id?: string; digest?: string; messageKind?: string }): Promise<string>;
  /** A member's vote; reaching the approval threshold releases (data) or signs (signature). Votes are never disclosed. */
  vote(requestId: string, member: string, approve: boolean): Promise<void>;
  /** Approves at once, whatever the threshold: releases a data request or signs a signature request. */
  approve(requestId: string): Promise<TestEnvelope>;
  /** Releases a data request: the attested `kyb.data_request.released` event; the same token is served by the release pull. */
  release(requestId: string, options?: { answers?: ReleasedAnswerEntry[] }): Promise<TestEnvelope>;
  /** Signs a signature request: `kyb.signature_request.signed`. */
  sign(requestId: string): Promise<TestEnvelope>;
  /** Refuses a pending request with a reason of spec §3 (any string is accepted, as new reasons may appear). */
  refuse(requestId: string, reason?: string): Promise<TestEnvelope>;
  /** Refusal with reason `expired`. */
  expire(requestId: string): Promise<TestEnvelope>;
  /**
   * Serves `token` as the release of a released request instead of the genuine one, to test that clients reject a
   * forged release (say, the same claims re-signed by a key the JWKS does not publish).
   */
  forgeRelease(requestId: string, token: string): void;
  /** Purges released values: the release pull answers 410 `payload_expired` from now on. */
  purge(requestId: string): void;
  /** Emits the attested `kyb.business.wallet_address_changed` on the business's stream. */
  changeBusinessWallet(options: { businessId?: string; previous: string; next: string }): Promise<TestEnvelope>;
  /**
   * Appends any event to a stream (next seq), for cases the named helpers do not cover. It carries an attestation
   * when its type is attested, or when `options.attest` is true: a new attested type the receiver does not know yet
   * (spec 5.6, 9.2). `attest: false` sends an attested type without one.
   *
   * @example
   * ```ts
   * await service.emit(id, 'kyb.data_request.reviewed', { request_id: id }, { attest: true })
   * ```
   */
  emit(
    streamId: string,
    type: TestEventType | string,
    data?: Record<string, unknown>,
    options?: { attest?: boolean },
  ): Promise<TestEnvelope>;
  request(requestId: string): ServiceRequestSnapshot | undefined;
  /** Delivery attempts, all or of one stream, in the order they completed. */
  attempts(streamId?: string): ServiceDeliveryAttempt[];
  /** Events given up on after every attempt failed. */
  readonly exhausted: readonly TestEnvelope[];
  /** Deliveries not yet done (held by quarantine, missing endpoint, or in progress). */
  pending(streamId?: string): number;
  /** Clears the quarantine, like POST reactivate; the backlog is then delivered in order. */
  reactivate(): boolean;
  /** Queues a stream's events again, like POST redeliver; returns how many. */
  redeliver(requestId: string): number;
  /** Resolves when no delivery can make progress: everything delivered or exhausted, or held by quarantine. */
  idle(): Promise<void>;
  /** The next `count` API calls fail as described (see {@link ApiFault}). */
  failNextApiCalls(count: number, fault?: ApiFault): void;
  /** The wait before delivery attempt `attempt` (≥ 2), already scaled. */
  delayBefore(attempt: number): number;
  stop(): Promise<void>;
}

interface RequestState {
  id: string;
  kind: ServiceRequestSnapshot['kind'];
  state: ServiceRequestSnapshot['state'];
  costCents: number;
  purged: boolean;
  events: TestEnvelope[];
  answers: ReleasedAnswerEntry[];
  digest?: string;
  releaseToken?: string;
  approvals: Set<string>;
  /** Appends in flight: signing is async, and seq order must be the order of the calls. */
  tail: Promise<unknown>;
}

const DEFAULT_QUOTE_CENTS = 2000;

/**
 * Starts the local KYB service on 127.0.0.1 (a free port): the KYB API of spec 4.2 (release pull, deliveries, events
 * after a seq, redeliver, reactivate) behind `Authorization: <API_KEY>`, the rotating KYB JWKS, and delivery of
 * every event to the merchant endpoint with the rules of spec 4.3 and §6. Error bodies are
 * `{ "error": { "code", "message" } }`; the release pull answers `{ "attestation": "<jwt>" }`. Creation is not
 * shown by the spec; besides the control API the service offers `POST {requestPrefix}` with
 * `{ "id"?, "price_cents"? }` → 201 `{ "id", "request_id", "state" }`, or 402 `insufficient_credit`.
 *
 * @example
 * ```ts
 * const service = await startKybService({ endpoint: { url: `${origin}/webhooks/kyb` } })
 * const receiver = createReceiver({ secrets: service.secrets, attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl } })
 * const id = await service.createDataRequest()
 * await service.release(id)
 * await service.idle()
 * await service.stop()
 * ```
 */
export async function startKybService(options: KybServiceOptions = {}): Promise<KybService> {
  const apiKey = options.apiKey ?? `kyb_test_${randomHex(16)}`;
  const issuer = options.issuer ?? TEST_ISSUER;
  const audience = options.audience ?? TEST_AUDIENCE;
  const seqBase = options.seqBase ?? 0;
  const requestPrefix = (options.requestPrefix ?? RELEASE_PATH_PREFIX).replace(/\/+$/, '');
  const signatureRequestPrefix = (options.signatureRequestPrefix ?? SIGNATURE_REQUEST_PATH_PREFIX).replace(/\/+$/, '');
  let apiShape: ApiShape = { ...options.apiShape };
  const now = options.now ?? Date.now;
  const ttl = options.attestationTtlSeconds ?? 600;
  const threshold = options.approvalThreshold ?? 1;
  const signatureCents = options.signatureRequestCents ?? 100;
  if (!Number.isInteger(seqBase) || seqBase < 0)
    throw new TypeError('seqBase must be a non-negative integer (0 or 1).');
  if (!requestPrefix.startsWith('/')) throw new TypeError('requestPrefix must be a path starting with "/".');
  if (!signatureRequestPrefix.startsWith('/'))
    throw new TypeError('signatureRequestPrefix must be a path starting with "/".');

  const keys = await createKeyRing(options.kid);
  const requests = new Map<string, RequestState>();
  const apiCalls: ApiCall[] = [];
  const faults: ApiFault[] = [];
  let jwksRequests = 0;
  let credit = options.creditCents ?? Number.POSITIVE_INFINITY;
  let secrets: Record<string, string> = {};

  const engine = createDeliveryEngine({
    timeScale: options.timeScale ?? 1e-4,
    maxAttempts: options.retry?.maxAttempts ?? REAL_RETRY_SCHEDULE.maxAttempts,
    baseDelayMs: options.retry?.baseDelayMs ?? REAL_RETRY_SCHEDULE.baseDelayMs,
    factor: options.retry?.factor ?? REAL_RETRY_SCHEDULE.factor,
    maxDelayMs: options.retry?.maxDelayMs ?? REAL_RETRY_SCHEDULE.maxDelayMs,
    quarantineAfter: options.quarantineAfter ?? 20,
    timeoutMs: options.deliveryTimeoutMs ?? 2000,
    fetch: options.fetch ?? globalThis.fetch,
    now,
  });

  function setEndpoint(input: EndpointInput | undefined): void {
    if (!input) return engine.setEndpoint(undefined);
    const endpointSecrets = { ...(input.secrets ?? { '1': randomSecret() }) };
    const versions = Object.keys(endpointSecrets);
    if (versions.length === 0) throw new TypeError('endpoint.secrets must hold at least one version.');
    const currentVersion = input.currentVersion ?? highestVersion(endpointSecrets);
    if (endpointSecrets[currentVersion] === undefined)
      throw new TypeError('endpoint.currentVersion must name one of the secrets.');
    secrets = endpointSecrets;
    const config: EndpointConfig = { url: input.url, secrets: endpointSecrets, currentVersion };
    engine.setEndpoint(config);
  }
  if (options.endpoint) setEndpoint(options.endpoint);

  function mustGet(requestId: string, kind?: RequestState['kind']): RequestState {
    const state = requests.get(requestId);
    if (!state || (kind && state.kind !== kind)) {
      throw new KybServiceError(
        404,
        'request_not_found',
        `No ${kind?.replace('_', ' ') ?? 'request'} with id ${requestId}.`,
      );
    }
    return state;
  }

  function charge(cents: number): void {
    if (cents > credit) {
      throw new KybServiceError(
        402,
        'insufficient_credit',
        `The request costs ${cents} cents and the credit is ${credit}; top up first.`,
        {
          required_cents: cents,
          available_cents: credit,
          currency: 'usd',
        },
      );
    }
    credit -= cents;
  }

  function append(
    state: RequestState,
    type: string,
    data: Record<string, unknown>,
    attest = isAttested(type),
  ): Promise<TestEnvelope> {
    const appended = state.tail.then(() => build(state, type, data, attest));
    state.tail = appended.catch(() => undefined);
    return appended;
  }

  async function build(
    state: RequestState,
    type: string,
    data: Record<string, unknown>,
    attest: boolean,
  ): Promise<TestEnvelope> {
    const seq = seqBase + state.events.length;
    const known = type as TestEventType;
    const base = isFixtureType(type)
      ? createTestEvent(known, { stream_id: state.id, seq, timestamp: Math.floor(now() / 1000), data })
      : {
          ...createTestEvent('kyb.data_request.refused', {
            stream_id: state.id,
            seq,
            timestamp: Math.floor(now() / 1000),
          }),
          event: type,
          data,
        };
    let envelope: TestEnvelope = base;
    if (attest) {
      const claims = attestationClaims(
        envelope,
        { issuer, audience, nowMs: now() },
        { answers: state.answers, expiresInSeconds: ttl },
      );
      envelope = { ...envelope, attestation: await keys.sign(claims) };
    }
    state.events.push(envelope);
    engine.enqueue(envelope);
    return envelope;
  }

  function pending(state: RequestState): void {
    if (state.state !== 'pending_approval') {
      throw new KybServiceError(
        409,
        'request_not_pending',
        `Request ${state.id} is ${state.state}, not pending_approval.`,
      );
    }
  }

  async function release(
    requestId: string,
    releaseOptions: { answers?: ReleasedAnswerEntry[] } = {},
  ): Promise<TestEnvelope> {
    const state = mustGet(requestId, 'data_request');
    pending(state);
    if (releaseOptions.answers) state.answers = releaseOptions.answers;
    state.state = 'released';
    const nowMs = now();
    const envelope = await append(state, 'kyb.data_request.released', {
      request_id: state.id,
      released_at: new Date(nowMs).toISOString(),
      field_count: new Set(state.answers.map((answer) => answer.name)).size,
      ...releaseChargeFor(state.answers, state.costCents),
      attestation_kid: keys.current.kid,
      attestation_expires_at: new Date(nowMs + ttl * 1000).toISOString(),
    });
    state.releaseToken = envelope.attestation;
    return envelope;
  }

  async function sign(requestId: string): Promise<TestEnvelope> {
    const state = mustGet(requestId, 'signature_request');
    pending(state);
    state.state = 'signed';
    return append(state, 'kyb.signature_request.signed', {
      request_id: state.id,
      digest: state.digest,
      signed_at: new Date(now()).toISOString(),
    });
  }

  async function refuse(requestId: string, reason = 'declined'): Promise<TestEnvelope> {
    const state = mustGet(requestId);
    pending(state);
    state.state = 'refused';
    const type = state.kind === 'signature_request' ? 'kyb.signature_request.refused' : 'kyb.data_request.refused';
    const data: Record<string, unknown> = { request_id: state.id, reason };
    if (state.kind === 'signature_request') data.digest = state.digest;
    return append(state, type, data);
  }

  const server = createServer((request, response) => {
    handleRequest(
      {
        apiKey,
        prefix: requestPrefix,
        signaturePrefix: signatureRequestPrefix,
        apiShape: () => apiShape,
        kind: (requestId) => requests.get(requestId)?.kind,
        purged: (requestId) => requests.get(requestId)?.purged === true,
        jwks: () => keys.jwks,
        countJwksRequest: () => {
          jwksRequests += 1;
        },
        eventsPageLimit: options.eventsPageLimit ?? 100,
        maxEventsPageLimit: 1000,
        takeFault: () => faults.shift(),
        record: (call) => apiCalls.push(call),
        now,
        release(requestId) {
          const state = requests.get(requestId);
          if (!state || state.kind !== 'data_request') return { status: 'not_found' };
          if (state.purged) return { status: 'payload_expired' };
          if (state.state !== 'released' || !state.releaseToken) return { status: 'not_released' };
          return { status: 'released', token: state.releaseToken };
        },
        events: (requestId) => requests.get(requestId)?.events,
        deliveries: (requestId) =>
          requests.has(requestId) ? engine.attempts.filter((attempt) => attempt.streamId === requestId) : undefined,
        redeliver: (requestId) => (requests.has(requestId) ? redeliver(requestId) : undefined),
        reactivate: () => engine.reactivate(),
        async createDataRequest(input) {
          try {
            return { id: await service.createDataRequest(input) };
          } catch (caught) {
            if (caught instanceof KybServiceError)
              return { status: caught.status, code: caught.code, message: caught.message, details: caught.details };
            throw caught;
          }
        },
      },
      request,
      response,
    ).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  function redeliver(requestId: string): number {
    const state = mustGet(requestId);
    for (const envelope of state.events) engine.enqueue(envelope);
    return state.events.length;
  }

  function newState(id: string, kind: RequestState['kind'], costCents: number): RequestState {
    if (requests.has(id)) throw new KybServiceError(409, 'request_exists', `A request with id ${id} exists already.`);
    const state: RequestState = {
      id,
      kind,
      state: kind === 'business' ? 'active' : 'pending_approval',
      costCents,
      purged: false,
      events: [],
      answers: defaultReleasedAnswers(),
      approvals: new Set(),
      tail: Promise.resolve(),
    };
    requests.set(id, state);
    return state;
  }

  const service: KybService = {
    baseUrl,
    jwksUrl: `${baseUrl}${KYB_JWKS_PATH}`,
    apiKey,
    issuer,
    audience,
    requestPrefix,
    signatureRequestPrefix,
    get apiShape() {
      return apiShape;
    },
    set apiShape(shape: ApiShape) {
      apiShape = { ...shape };
    },
    get kid() {
      return keys.current.kid;
    },
    get jwks() {
      return keys.jwks;
    },
    get quarantined() {
      return engine.quarantined;
    },
    get apiCalls() {
      return apiCalls;
    },
    get jwksRequests() {
      return jwksRequests;
    },
    get creditCents() {
      return credit;
    },
    set creditCents(cents: number) {
      credit = cents;
    },
    get secrets() {
      return secrets;
    },
    get exhausted() {
      return engine.exhausted;
    },
    async rotateKeys(kid) {
      return (await keys.rotate(kid)).kid;
    },
    retireKey: (kid) => keys.retire(kid),
    signToken: (claims) => keys.sign(claims),
    setEndpoint,

    async createDataRequest(create = {}) {
      const cost = create.priceCents ?? DEFAULT_QUOTE_CENTS;
      const id = create.id ?? `dr_${ulid().toLowerCase()}`;
      if (requests.has(id)) throw new KybServiceError(409, 'request_exists', `A request with id ${id} exists already.`);
      charge(cost);
      const state = newState(id, 'data_request', cost);
      if (create.answers) state.answers = create.answers;
      const data: Record<string, unknown> = { request_id: id };
      if (create.priceCents !== undefined) data.price = { quoted_cents: cost, currency: 'EUR', lines: [] };
      if (create.offerId !== undefined) data.offer_id = create.offerId;
      await append(state, 'kyb.data_request.pending_approval', data);
      return id;
    },

    async createSignatureRequest(create = {}) {
      const id = create.id ?? `sr_${ulid().toLowerCase()}`;
      if (requests.has(id)) throw new KybServiceError(409, 'request_exists', `A request with id ${id} exists already.`);
      charge(signatureCents);
      const state = newState(id, 'signature_request', signatureCents);
      state.digest = create.digest ?? `0x${randomHex(32)}`;
      await append(state, 'kyb.signature_request.pending_approval', {
        request_id: id,
        digest: state.digest,
        message_kind: create.messageKind ?? 'eip191',
        created_at: new Date(now()).toISOString(),
      });
      return id;
    },

    async vote(requestId, member, approve) {
      const state = mustGet(requestId);
      pending(state);
      if (!approve) return;
      state.approvals.add(member);
      if (state.approvals.size < threshold) return;
      if (state.kind === 'data_request') await release(requestId);
      else await sign(requestId);
    },

    approve(requestId) {
      return mustGet(requestId).kind === 'signature_request' ? sign(requestId) : release(requestId);
    },
    release,
    sign,
    refuse,
    expire: (requestId) => refuse(requestId, 'expired'),

    forgeRelease(requestId, token) {
      const state = mustGet(requestId, 'data_request');
      if (state.state !== 'released')
        throw new KybServiceError(409, 'not_released', `Release ${requestId} before forging its release.`);
      state.releaseToken = token;
    },

    purge(requestId) {
      const state = mustGet(requestId, 'data_request');
      state.purged = true;
      delete state.releaseToken;
    },

    async changeBusinessWallet({ businessId, previous, next }) {
      const id = businessId ?? `biz_${ulid().toLowerCase()}`;
      const state = requests.get(id) ?? newState(id, 'business', 0);
      return append(state, 'kyb.business.wallet_address_changed', {
        previous_wallet_address: previous,
        wallet_address: next,
      });
    },

    async emit(streamId, type, data = {}, emitOptions = {}) {
      const state =
        requests.get(streamId) ??
        newState(streamId, streamId.startsWith('sr_') ? 'signature_request' : 'data_request', 0);
      return append(state, type, data, emitOptions.attest ?? isAttested(type));
    },

    request(requestId) {
      const state = requests.get(requestId);
      if (!state) return undefined;
      const { id, kind, state: current, costCents, purged, events } = state;
      return { id, kind, state: current, costCents, purged, events: [...events] };
    },

    attempts: (streamId) =>
      engine.attempts.filter((attempt) => streamId === undefined || attempt.streamId === streamId),
    pending: (streamId) => engine.pending(streamId),
    reactivate: () => engine.reactivate(),
    redeliver,
    idle: () => engine.idle(),
    delayBefore: (attempt) => engine.delayBefore(attempt),

    failNextApiCalls(count, fault = { status: 503 }) {
      for (let index = 0; index < count; index++) faults.push({ ...fault });
    },

    async stop() {
      engine.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
  return service;
}

function isFixtureType(type: string): type is TestEventType {
  return (TEST_EVENT_TYPES as readonly string[]).includes(type);
}

// The known attested types; an unknown type is attested only when a test asks through emit()'s `attest`: the spec
// lets new attested types appear, but the kit cannot guess which.
function isAttested(type: string): boolean {
  return ATTESTED_TEST_EVENT_TYPES.has(type as TestEventType);
}
