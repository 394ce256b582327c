/*
 * The receivers under fuzz and the invariants every delivery must keep. Each mode (HMAC + attestation, attestation
 * only, HMAC only) has two receivers, one per crypto path (node:crypto and Web Crypto), with identical options.
 * Stores are swapped for fresh ones at the start of every case, so a case never depends on the cases before it and
 * fast-check can replay and shrink it alone.
 */
import type { JSONWebKeySet } from 'jose';
import { platformCrypto as nodeCrypto } from '../src/verify/crypto/node.js';
import { platformCrypto as webCrypto } from '../src/verify/crypto/web.js';
import type { PlatformCrypto } from '../src/verify/crypto/types.js';
import type { ClaimOptions, CompleteOptions, DedupeStore } from '../src/store/dedupe.js';
import type { HandlerContext } from '../src/pipeline/dispatch.js';
import { KNOWN_EVENT_TYPES } from '../src/events/event-types.js';
import type { HeadersInput } from '../src/http/headers.js';
import type { LogEntry } from '../src/log/logger.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { createReceiver, type Receiver, type ReceiveResult } from '../src/receiver.js';
import {
  referenceHmac,
  referenceParseJson,
  referenceVerdict,
  type ReferenceConfig,
  type Verdict,
} from './reference.js';
import type { FuzzWorld } from './world.js';

/** The three ways a merchant can configure a receiver. */
export type Mode = 'hmac+attestation' | 'attestation-only' | 'hmac-only';

/**
 * 5xx codes a receiver may answer: each tells the service to retry something a retry can cure. `internal_error` is
 * deliberately absent: it means the pipeline itself failed on an input.
 */
export const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'store_unavailable',
  'jwks_unavailable',
  'handler_failed',
  'handler_timeout',
]);

/** Where a handler was registered. `unauthenticated` is the attestation-only hook for unattested deliveries. */
type HandlerKind = 'on' | 'any' | 'unknown' | 'unauthenticated';

interface HandlerCall {
  kind: HandlerKind;
  eventType: string;
  eventId: string;
  attestation: boolean;
}

/**
 * What a store answers in a case: `real` forwards to the memory store; anything else is a custom store that
 * misbehaves in that way (issue 11 §5). Valid claim answers are `real`, `completed` and `in_progress`.
 */
export interface StoreScript {
  claim: ClaimScript;
  complete: SettleScript;
  /** Answers (real or junk) given as values, as an in-process store may, instead of promises. */
  synchronous: boolean;
}
export type ClaimScript =
  | 'real'
  | 'completed'
  | 'in_progress'
  | 'status duplicate'
  | 'empty object'
  | 'true'
  | 'null'
  | 'undefined'
  | 'string acquired'
  | 'acquired without token'
  | 'acquired with numeric token'
  | 'status in upper case'
  | 'throws'
  | 'rejects';
export type SettleScript = 'real' | 'throws' | 'rejects' | 'false' | 'string' | 'undefined';
/** Claim answers a store may give; any other must make the delivery `store_unavailable` with no handler run. */
export const VALID_CLAIM_SCRIPTS: ReadonlySet<ClaimScript> = new Set(['real', 'completed', 'in_progress']);
const REAL: StoreScript = { claim: 'real', complete: 'real', synchronous: true };

/** A DedupeStore that forwards to a memory store replaced per case, counts what was asked of it, and can misbehave. */
interface CountingStore extends DedupeStore {
  writes: number;
  reset(script?: StoreScript): void;
}

interface Lane {
  path: 'node' | 'web';
  receiver: Receiver;
  store: CountingStore;
  calls: HandlerCall[];
  logs: LogEntry[];
}

/** What one receiver did with one delivery. */
export interface Outcome {
  path: 'node' | 'web';
  result?: ReceiveResult;
  /** Set when `receive` threw or rejected: always a bug. */
  thrown?: unknown;
  calls: HandlerCall[];
  storeWrites: number;
  logs: LogEntry[];
}

/** One delivery as the adapters hand it over. */
export interface Delivery {
  headers: HeadersInput;
  body: Uint8Array;
}

/** The receivers of one mode and the judge's view of their configuration. */
export interface ModeLanes {
  mode: Mode;
  reference: ReferenceConfig;
  lanes: readonly [Lane, Lane];
}

function scripted(answer: ClaimScript | SettleScript, synchronous: boolean, real: () => unknown): never {
  const junk: Record<string, () => unknown> = {
    completed: () => ({ status: 'completed' }),
    in_progress: () => ({ status: 'in_progress' }),
    'status duplicate': () => ({ status: 'duplicate' }),
    'empty object': () => ({}),
    true: () => true,
    null: () => null,
    undefined: () => undefined,
    'string acquired': () => 'acquired',
    'acquired without token': () => ({ status: 'acquired' }),
    'acquired with numeric token': () => ({ status: 'acquired', token: 42 }),
    'status in upper case': () => ({ status: 'COMPLETED' }),
    false: () => false,
    string: () => 'true',
  };
  const given = (value: unknown): never => (synchronous ? value : Promise.resolve(value)) as never;
  if (answer === 'real') return given(real());
  if (answer === 'throws') throw new Error('store down (sync)');
  if (answer === 'rejects') return Promise.reject(new Error('store down')) as never;
  return given(junk[answer]!());
}

function countingStore(now: () => number): CountingStore {
  let inner = createMemoryStore({ now });
  let script = REAL;
  const store: CountingStore = {
    writes: 0,
    reset(next = REAL) {
      inner = createMemoryStore({ now });
      script = next;
      store.writes = 0;
    },
    claim(eventId: string, options: ClaimOptions) {
      store.writes++;
      return scripted(script.claim, script.synchronous, () => inner.claim(eventId, options));
    },
    complete(eventId: string, token: string, options: CompleteOptions) {
      store.writes++;
      return scripted(script.complete, script.synchronous, () => inner.complete(eventId, token, options));
    },
    release(eventId: string, token: string) {
      store.writes++;
      return inner.release(eventId, token);
    },
  };
  return store;
}

function createLane(world: FuzzWorld, mode: Mode, path: 'node' | 'web', crypto: PlatformCrypto): Lane {
  const now = () => world.nowMs;
  const store = countingStore(now);
  const calls: HandlerCall[] = [];
  const logs: LogEntry[] = [];
  const receiver = createReceiver({
    ...(mode !== 'attestation-only' ? { secrets: world.receiverSecrets } : {}),
    ...(mode !== 'hmac-only'
      ? {
          attestation: {
            issuer: world.issuer,
            audience: world.audience,
            jwks: world.jwks as JSONWebKeySet,
            leewaySeconds: world.leewaySeconds,
          },
        }
      : {}),
    store,
    now,
    crypto,
    logger: (entry) => logs.push(entry),
  });
  const record = (kind: HandlerKind) => (event: { event: string; event_id: string }, context: HandlerContext) => {
    calls.push({
      kind,
      eventType: event.event,
      eventId: event.event_id,
      attestation: context?.authentication?.attestation === true,
    });
  };
  for (const type of KNOWN_EVENT_TYPES) receiver.on(type, record('on') as never);
  receiver.onAny(record('any'));
  receiver.onUnknown(record('unknown'));
  // The lead is adding this hook (issue 11 §1); register it when this build of the core has it.
  const withHook = receiver as Receiver & {
    onUnauthenticated?: (handler: (event: never, context: never) => unknown) => Receiver;
  };
  if (typeof withHook.onUnauthenticated === 'function') withHook.onUnauthenticated(record('unauthenticated') as never);
  return { path, receiver, store, calls, logs };
}

/**
 * Creates the six receivers (three modes × two crypto paths).
 *
 * @example
 * ```ts
 * const modes = createModeLanes(world)
 * const outcomes = await deliverBoth(modes['attestation-only'], delivery)
 * ```
 */
export function createModeLanes(world: FuzzWorld): Record<Mode, ModeLanes> {
  const build = (mode: Mode): ModeLanes => ({
    mode,
    reference: {
      nowMs: world.nowMs,
      toleranceSeconds: 300,
      ...(mode !== 'attestation-only' ? { secrets: world.referenceSecrets } : {}),
      ...(mode !== 'hmac-only'
        ? {
            attestation: {
              issuer: world.issuer,
              audience: world.audience,
              jwks: world.jwks,
              leewaySeconds: world.leewaySeconds,
            },
          }
        : {}),
    },
    lanes: [createLane(world, mode, 'node', nodeCrypto), createLane(world, mode, 'web', webCrypto)],
  });
  return {
    'hmac+attestation': build('hmac+attestation'),
    'attestation-only': build('attestation-only'),
    'hmac-only': build('hmac-only'),
  };
}

/**
 * Gives both receivers of a mode fresh, empty stores (behaving as `script` says): the start of every case.
 *
 * @example
 * ```ts
 * resetStores(modes['attestation-only'])
 * resetStores(modes['hmac-only'], { claim: 'status duplicate', complete: 'real' }) // a custom store that lies
 * ```
 */
export function resetStores(modeLanes: ModeLanes, script?: StoreScript): void {
  for (const lane of modeLanes.lanes) lane.store.reset(script);
}

/**
 * Runs one delivery through the node:crypto receiver, then the Web Crypto one, and records what each did.
 *
 * @example
 * ```ts
 * const [node, web] = await deliverBoth(modes['hmac-only'], { headers, body })
 * ```
 */
export async function deliverBoth(modeLanes: ModeLanes, delivery: Delivery): Promise<[Outcome, Outcome]> {
  const outcomes: Outcome[] = [];
  for (const lane of modeLanes.lanes) {
    lane.calls.length = 0;
    lane.logs.length = 0;
    const writesBefore = lane.store.writes;
    const outcome: Outcome = { path: lane.path, calls: [], storeWrites: 0, logs: [] };
    try {
      outcome.result = await lane.receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
    } catch (error) {
      outcome.thrown = error;
    }
    outcome.calls = [...lane.calls];
    outcome.logs = [...lane.logs];
    outcome.storeWrites = lane.store.writes - writesBefore;
    outcomes.push(outcome);
  }
  return outcomes as [Outcome, Outcome];
}

/** Values no log entry may ever contain: the HMAC secrets and the signature segments of tokens in play. */
export interface Secrets {
  strings: readonly string[];
}

/**
 * The invariants of issue 11 "Proof" for one delivery; throws an Error naming the first one broken, so fast-check
 * reports it with the case and its seed. Returns the judge's verdict for callers that check more.
 *
 * @example
 * ```ts
 * const verdict = checkInvariants(modes[mode], delivery, await deliverBoth(modes[mode], delivery), secrets)
 * ```
 */
export function checkInvariants(
  modeLanes: ModeLanes,
  delivery: Delivery,
  outcomes: readonly [Outcome, Outcome],
  secrets: Secrets,
  tokenSignatures: readonly string[] = [],
): Verdict {
  const { mode, reference } = modeLanes;
  let verdict: Verdict | undefined;
  const judge = () => (verdict ??= referenceVerdict(reference, delivery.headers, delivery.body));
  for (const outcome of outcomes) {
    const where = `[${mode}, ${outcome.path}]`;
    if (outcome.thrown !== undefined || !outcome.result) {
      throw new Error(`${where} receive() threw or rejected: ${describeError(outcome.thrown)}`);
    }
    const { status, code } = outcome.result;
    const handlersRan = outcome.calls.length;
    if (status >= 500) {
      const configSignal =
        code === 'attestation_not_configured' &&
        mode === 'hmac-only' &&
        referenceHmac(reference, delivery.headers, delivery.body).ok;
      if (!RETRYABLE_CODES.has(String(code)) && !configSignal)
        throw new Error(`${where} answered ${status} ${code}, a 5xx that is not retryable`);
    }
    if (status < 200 || status >= 300) {
      if (handlersRan > 0)
        throw new Error(`${where} handlers ran (${kinds(outcome)}) but the answer was ${status} ${code}`);
    } else if (code === 'unauthenticated') {
      if (mode !== 'attestation-only') throw new Error(`${where} answered 200 unauthenticated in ${mode} mode`);
      const parsed = referenceParseJson(delivery.body);
      const carried =
        parsed.ok &&
        typeof parsed.value === 'object' &&
        parsed.value !== null &&
        Object.hasOwn(parsed.value, 'attestation');
      if (carried) throw new Error(`${where} answered 200 unauthenticated to a delivery that carries an attestation`);
      const verified = outcome.calls.filter((call) => call.kind !== 'unauthenticated');
      if (verified.length > 0)
        throw new Error(`${where} an unauthenticated delivery ran verified handlers (${kinds(outcome)})`);
      if (outcome.storeWrites > 0)
        throw new Error(`${where} an unauthenticated delivery wrote to the dedupe store ${outcome.storeWrites}×`);
    } else {
      const judged = judge();
      if (!judged.ok)
        throw new Error(
          `${where} acknowledged ${status}${code ? ` ${code}` : ''} what the reference rejects: ${judged.reason}`,
        );
      if (code === 'duplicate') {
        if (handlersRan > 0) throw new Error(`${where} a duplicate ran handlers (${kinds(outcome)})`);
      } else {
        checkDispatch(where, outcome, judged.envelope);
      }
    }
    checkLogs(where, outcome, secrets, tokenSignatures);
  }
  const [node, web] = outcomes;
  if (node.result!.status !== web.result!.status || node.result!.code !== web.result!.code) {
    throw new Error(
      `[${mode}] node:crypto and Web Crypto disagree: node ${node.result!.status} ${node.result!.code ?? ''}, web ${web.result!.status} ${web.result!.code ?? ''}`,
    );
  }
  return judge();
}

const KNOWN: ReadonlySet<string> = new Set(KNOWN_EVENT_TYPES);

/** A first, successful delivery ran exactly the handlers its type selects: on(type) or onUnknown, and onAny once. */
function checkDispatch(where: string, outcome: Outcome, envelope: Record<string, unknown>): void {
  const type = envelope['event'] as string;
  const count = (kind: HandlerKind) => outcome.calls.filter((call) => call.kind === kind).length;
  const expected = { on: KNOWN.has(type) ? 1 : 0, any: 1, unknown: KNOWN.has(type) ? 0 : 1, unauthenticated: 0 };
  for (const kind of Object.keys(expected) as HandlerKind[]) {
    if (count(kind) !== expected[kind])
      throw new Error(
        `${where} ${type}: ${kind} handlers ran ${count(kind)}×, expected ${expected[kind]}× (${kinds(outcome)})`,
      );
  }
  for (const call of outcome.calls) {
    if (call.eventType !== type || call.eventId !== envelope['event_id'])
      throw new Error(`${where} a handler saw another event than the one verified`);
    if (call.attestation !== (typeof envelope['attestation'] === 'string'))
      throw new Error(`${where} context.authentication.attestation is wrong`);
  }
}

/** Issue 11 §7: values a sender controls are cut to a few hundred characters; MAX_FIELD_CHARS leaves room for prose. */
const MAX_FIELD_CHARS = 1_000;
const MAX_LOG_ENTRY_CHARS = 64 * 1024;
const LOGGED_TEXT_FIELDS = ['message', 'code', 'eventId', 'eventType', 'detail'] as const;
// eslint-disable-next-line no-control-regex -- finding raw control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

function checkLogs(where: string, outcome: Outcome, secrets: Secrets, tokenSignatures: readonly string[]): void {
  for (const entry of outcome.logs) {
    const text = safeStringify(entry);
    if (text.length > MAX_LOG_ENTRY_CHARS)
      throw new Error(`${where} a log entry is ${text.length} characters long (${entry.code ?? entry.message})`);
    for (const field of LOGGED_TEXT_FIELDS) {
      const value = entry[field];
      if (typeof value !== 'string') continue;
      if (value.length > MAX_FIELD_CHARS)
        throw new Error(`${where} log field ${field} is ${value.length} characters long (${entry.code ?? ''})`);
      if (CONTROL.test(value))
        throw new Error(`${where} log field ${field} carries a raw control character (${entry.code ?? ''})`);
    }
    for (const secret of secrets.strings)
      if (text.includes(secret)) throw new Error(`${where} a log entry contains an HMAC secret`);
    for (const signature of tokenSignatures) {
      if (signature.length >= 16 && text.includes(signature))
        throw new Error(`${where} a log entry contains an attestation token`);
    }
  }
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

function kinds(outcome: Outcome): string {
  return outcome.calls.map((call) => call.kind).join(', ') || 'none';
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message.slice(0, 200)}`;
  return String(error).slice(0, 200);
}
