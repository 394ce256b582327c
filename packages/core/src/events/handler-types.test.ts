import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import { KNOWN_EVENT_TYPES } from './event-types.js';
import { createReceiver } from '../receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'types-secret' } });
});

function setup() {
  const receiver = createReceiver({ secrets: { '1': 'types-secret' } });
  const deliver = async (envelope: TestEnvelope) => {
    const { headers, body } = await signer.sign(envelope, { attest: false });
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver };
}

describe('receiver.on with a list of types', () => {
  it('runs the handler for each listed type, and narrows the event by event.event', async () => {
    const { receiver, deliver } = setup();
    const seen: string[] = [];
    receiver.on(['kyb.data_request.refused', 'kyb.signature_request.refused'], (event) => {
      // Both refusal types carry a reason; only the signature refusal carries a digest.
      if (event.event === 'kyb.signature_request.refused') seen.push(`signature:${event.data.digest.length > 0}`);
      else seen.push(`data:${event.data.reason}`);
    });
    await deliver(testEvents.dataRequestRefused({ data: { reason: 'declined' } }));
    await deliver(testEvents.signatureRequestRefused());
    expect(seen).toEqual(['data:declined', 'signature:true']);
  });

  it('does not run it for a type not in the list', async () => {
    const { receiver, deliver } = setup();
    const seen: string[] = [];
    receiver.on(['kyb.data_request.refused'], (event) => void seen.push(event.event));
    expect((await deliver(testEvents.signatureRequestRefused())).status).toBe(200);
    expect(seen).toEqual([]);
  });
});

describe('receiver.on refuses a mistake at registration with config_invalid', () => {
  it.each([
    ['an empty list', [], /name at least one event type/],
    [
      'a type with a space',
      'kyb.data_request refused',
      /"kyb.data_request refused" is not an event type: did you mean 'kyb.data_request.refused'\?/,
    ],
    ['an empty type', '', /"" is not an event type/],
    ['a number in the list', ['kyb.data_request.refused', 7], /a number is not an event type/],
    ['undefined (a missing constant)', undefined, /undefined is not an event type/],
  ])('%s', (_what, type, message) => {
    const { receiver } = setup();
    const register = () => receiver.on(type as never, () => {});
    expect(register).toThrow(KybWebhookError);
    expect(register).toThrow(message);
  });

  it('a handler that is not a function', () => {
    const { receiver } = setup();
    const register = () => receiver.on('kyb.data_request.refused', 'handleRefusal' as never);
    expect(register).toThrow(KybWebhookError);
    expect(register).toThrow(/the handler must be a function; got a string/);
  });

  it('still accepts a type this version does not know, for new attested types', async () => {
    const { receiver } = setup();
    expect(() => receiver.on('kyb.business.sanctions_flagged' as never, () => {})).not.toThrow();
  });
});

/** What registering `type` from plain JavaScript throws: no TypeScript type stands between the caller and the check. */
function registrationError(type: unknown): KybWebhookError | undefined {
  const { receiver } = setup();
  const on = receiver.on as unknown as (type: unknown, handler: () => void) => unknown;
  try {
    on(type, () => {});
    return undefined;
  } catch (error) {
    if (error instanceof KybWebhookError) return error;
    throw error;
  }
}

// The rule (handler-types.ts, README "Handlers"): known names, or names of their shape kyb.<resource>.<action> in
// lower-case snake_case that are not a near miss of a known name. A near miss, ignoring case, separators and the kyb
// prefix, is within two edits of a known name, or contains one, or is part of one.
describe('receiver.on refuses a misspelt known type with config_invalid and a did-you-mean, at run time', () => {
  it.each([
    ['no kyb. prefix', 'data_request.released', 'kyb.data_request.released'],
    ['one letter missing', 'kyb.data_request.release', 'kyb.data_request.released'],
    ['all upper case', 'KYB.DATA_REQUEST.RELEASED', 'kyb.data_request.released'],
    ['words capitalised', 'kyb.Data_Request.Released', 'kyb.data_request.released'],
    ['hyphens for underscores', 'kyb.data-request.released', 'kyb.data_request.released'],
    ['underscores for dots', 'kyb_data_request_released', 'kyb.data_request.released'],
    ['words run together', 'kyb.datarequest.released', 'kyb.data_request.released'],
    ['a plural resource', 'kyb.data_requests.released', 'kyb.data_request.released'],
    ['two letters swapped', 'kyb.data_request.relaesed', 'kyb.data_request.released'],
    ['two typos', 'kyb.data_reqest.relesed', 'kyb.data_request.released'],
    ['a misspelt kyb prefix', 'kby.data_request.refused', 'kyb.data_request.refused'],
    ['a word cut off the end', 'kyb.data_request.pending', 'kyb.data_request.pending_approval'],
    ['a word added at the end', 'kyb.data_request.released_event', 'kyb.data_request.released'],
    ['a word added in front', 'webhook.kyb.data_request.released', 'kyb.data_request.released'],
    ['a past tense of another verb', 'kyb.signature_request.singed', 'kyb.signature_request.signed'],
    ['half of the resource', 'kyb.request.signed', 'kyb.signature_request.signed'],
    ['a misspelt word inside the action', 'kyb.business.wallet_adress_changed', 'kyb.business.wallet_address_changed'],
    ['the action split differently', 'kyb.wallet_address.changed', 'kyb.business.wallet_address_changed'],
    ['a space for a dot', 'kyb.data_request refused', 'kyb.data_request.refused'],
  ])('%s: %s', (_what, type, meant) => {
    const error = registrationError(type);
    expect(error?.code).toBe('config_invalid');
    expect(error?.message).toContain(
      `receiver.on: ${JSON.stringify(type)} is not an event type: did you mean '${meant}'?`,
    );
    // The way out for a genuinely new type that happens to look like a known one.
    expect(error?.message).toMatch(/new type this version does not know yet, handle it in receiver.onAny/);
  });

  it('refuses the whole call when one name of a list is misspelt, and registers none of it', async () => {
    const { receiver, deliver } = setup();
    const ran: string[] = [];
    expect(() =>
      receiver.on(['kyb.data_request.refused', 'kyb.data_request.release' as never], () => void ran.push('ran')),
    ).toThrow(/did you mean 'kyb.data_request.released'\?/);
    await deliver(testEvents.dataRequestRefused());
    expect(ran).toEqual([]);
  });

  it('accepts every known type', () => {
    expect(registrationError(KNOWN_EVENT_TYPES)).toBeUndefined();
  });
});

describe('receiver.on accepts a well-formed type this version does not know, and routes it as before', () => {
  it.each([
    'kyb.data_request.archived',
    'kyb.new_thing.happened',
    'kyb.business.sanctions_flagged',
    'kyb.data_request.expired',
    'kyb.data_request.revoked',
    'kyb.data_request.created',
    'kyb.signature_request.expired',
    'kyb.business.verified',
    'kyb.endpoint.quarantined',
    'kyb.business_v2.verified',
  ])('%s', (type) => {
    expect(registrationError(type)).toBeUndefined();
  });

  it('runs its on() handler and the onUnknown handlers for a delivery of that type', async () => {
    const { receiver, deliver } = setup();
    const ran: string[] = [];
    receiver.on('kyb.data_request.archived' as never, (event: { event: string }) => void ran.push(`on:${event.event}`));
    receiver.onUnknown((event) => void ran.push(`unknown:${event.event}`));
    const archived = {
      ...testEvents.dataRequestRefused(),
      event: 'kyb.data_request.archived',
    } as unknown as TestEnvelope;
    expect((await deliver(archived)).status).toBe(200);
    expect(ran).toEqual(['on:kyb.data_request.archived', 'unknown:kyb.data_request.archived']);
  });
});

describe('receiver.on refuses a name of another shape that is no near miss either', () => {
  it.each([
    ['no kyb. prefix', 'order.created'],
    ['two parts', 'kyb.archived'],
    ['four parts', 'kyb.data_request.archived.v2'],
    ['upper case', 'kyb.Business.Verified'],
    ['a hyphen', 'kyb.new-thing.happened'],
    ['a trailing underscore', 'kyb.new_thing.happened_'],
    ['a part starting with a digit', 'kyb.2fa.enabled'],
    ['a prototype name', 'constructor'],
    ['only the prefix', 'kyb'],
  ])('%s: %s', (_what, type) => {
    const error = registrationError(type);
    expect(error?.code).toBe('config_invalid');
    expect(error?.message).toContain(
      `receiver.on: ${JSON.stringify(type)} is not an event type; pass a name such as 'kyb.data_request.released'`,
    );
    expect(error?.message).toContain('kyb.<resource>.<action> in lower-case snake_case');
  });
});

describe('receiver.on picks the likeliest known type for its did-you-mean', () => {
  it.each([
    // One edit from refused, two from released: the fewest edits win, whatever the lengths.
    ['one extra letter in refused', 'kyb.data_request.refeused', 'kyb.data_request.refused'],
    ['one letter changed in refused', 'kyb.data_request.refased', 'kyb.data_request.refused'],
    ['one letter dropped from released', 'kyb.data_request.reeased', 'kyb.data_request.released'],
    // Two edits from each: the first known type in the list keeps the tie.
    ['a blend of released and refused', 'kyb.data_request.reefsed', 'kyb.data_request.released'],
    // Part of both pending approvals: the one closest in length.
    ['a resource cut to its last word', 'kyb.request.pending', 'kyb.data_request.pending_approval'],
    ['only the shared word', 'kyb.request', 'kyb.data_request.refused'],
    // Containing two known types (a list written as one string): the one closest in length.
    [
      'two types in one string',
      'kyb.data_request.refused,kyb.signature_request.refused',
      'kyb.signature_request.refused',
    ],
    [
      'two types separated by a space',
      'kyb.data_request.released kyb.data_request.refused',
      'kyb.data_request.released',
    ],
    // No kyb prefix and a typo: still two edits or fewer once the prefix is ignored.
    ['no kyb. prefix and a letter missing', 'data_request.relesed', 'kyb.data_request.released'],
  ])('%s: %s', (_what, type, meant) => {
    const error = registrationError(type);
    expect(error?.code).toBe('config_invalid');
    expect(error?.message).toContain(`is not an event type: did you mean '${meant}'?`);
  });
});

describe('receiver.on: the code and the shown name of a refusal', () => {
  it('gives config_invalid to a handler that is not a function, and to an empty list', () => {
    const { receiver } = setup();
    const on = receiver.on as unknown as (type: unknown, handler: unknown) => unknown;
    const codeOf = (register: () => unknown) => {
      try {
        register();
      } catch (error) {
        return error instanceof KybWebhookError ? error.code : error;
      }
      return undefined;
    };
    expect(codeOf(() => on('kyb.data_request.refused', 'handleRefusal'))).toBe('config_invalid');
    expect(codeOf(() => on([], () => {}))).toBe('config_invalid');
  });

  it('shows at most the first 80 characters of a refused name', () => {
    const type = `kyb.${'x'.repeat(300)}`;
    const error = registrationError(type);
    expect(error?.code).toBe('config_invalid');
    expect(error?.message).toContain(`receiver.on: ${JSON.stringify(type.slice(0, 80))} is not an event type;`);
    expect(error?.message).not.toContain('x'.repeat(77));
  });
});

describe('receiver.on refuses what only looks like a well-formed name', () => {
  it.each<[string, unknown]>([
    ['a name of the right shape longer than 200 characters', `kyb.${'a'.repeat(200)}.created`],
    ['a kyb type behind another prefix', 'acme.kyb.new_thing.happened'],
    ['a known type inside a nested list', ['kyb.data_request.released']],
    ['a new type inside a nested list', ['kyb.new_thing.happened']],
    ['an object whose string form is a known type', { toString: () => 'kyb.data_request.released' }],
  ])('%s', (_what, type) => {
    const error = registrationError([type]);
    expect(error?.code).toBe('config_invalid');
    expect(error?.message).toMatch(/ is not an event type; pass a name such as 'kyb\.data_request\.released'/);
  });
});
