import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { createConsoleLogger, formatLogEntry, type LogConsole } from './console-logger.js';
import { KybWebhookError } from '../errors.js';
import { createReceiver } from '../receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'console-secret' } });
});
afterEach(() => {
  vi.restoreAllMocks();
});

function capture(): { console: LogConsole; lines: [string, string][] } {
  const lines: [string, string][] = [];
  const record = (level: string) => (text: string) => void lines.push([level, text]);
  return {
    console: { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') },
    lines,
  };
}

describe('the default logger', () => {
  it('prints one readable line per rejection on the console when no logger is given', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const receiver = createReceiver({ secrets: { '1': 'console-secret' } });
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused(), { secret: 'whsec_forged' });
    await receiver.receive({ method: 'POST', headers, body });
    expect(warn).toHaveBeenCalledOnce();
    expect(warn.mock.calls[0]![0]).toMatch(
      /^kyb-webhooks warn 401 signature_mismatch: delivery rejected: signature_mismatch/,
    );
    expect(String(warn.mock.calls[0]![0])).not.toContain('whsec_');
  });

  it('prints a failing handler with its stack', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createReceiver({ secrets: { '1': 'console-secret' } });
    receiver.on('kyb.data_request.refused', function saveRefusal() {
      throw new Error('database is down');
    });
    await receiver.receive({ method: 'POST', ...(await signer.sign(testEvents.dataRequestRefused())) });
    const printed = error.mock.calls.map((call) => String(call[0])).join('\n');
    expect(printed).toMatch(/^kyb-webhooks error 500 handler_failed/);
    expect(printed).toContain('database is down');
    expect(printed).toMatch(/\n {2,}at .*saveRefusal/);
  });

  it('prints nothing for a delivery that succeeds', async () => {
    const spies = (['debug', 'info', 'warn', 'error'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => {}),
    );
    const receiver = createReceiver({ secrets: { '1': 'console-secret' } });
    receiver.on('kyb.data_request.refused', () => {});
    expect(
      (await receiver.receive({ method: 'POST', ...(await signer.sign(testEvents.dataRequestRefused())) })).status,
    ).toBe(200);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it('is silenced with logger: false', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const receiver = createReceiver({ secrets: { '1': 'console-secret' }, logger: false });
    await receiver.receive({
      method: 'POST',
      ...(await signer.sign(testEvents.dataRequestRefused(), { secret: 'whsec_forged' })),
    });
    expect(warn).not.toHaveBeenCalled();
  });

  it('is replaced by a logger of your own', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const entries: unknown[] = [];
    const receiver = createReceiver({ secrets: { '1': 'console-secret' }, logger: (entry) => entries.push(entry) });
    await receiver.receive({
      method: 'POST',
      ...(await signer.sign(testEvents.dataRequestRefused(), { secret: 'whsec_forged' })),
    });
    expect(warn).not.toHaveBeenCalled();
    expect(entries).toHaveLength(1);
  });

  it.each([
    ['true', true],
    ['a string', 'console'],
  ])('refuses logger: %s with config_invalid', (_what, logger) => {
    const create = () => createReceiver({ secrets: { '1': 'console-secret' }, logger: logger as never });
    expect(create).toThrow(KybWebhookError);
    expect(create).toThrow(/`logger` must be a function \(.*\) or false/);
  });
});

describe('createConsoleLogger', () => {
  it('prints from its level up, each to the console method of its level', () => {
    const { console: out, lines } = capture();
    const log = createConsoleLogger({ level: 'info', console: out });
    log({ level: 'debug', message: 'not shown' });
    log({ level: 'info', message: 'gap backfilled', code: 'stream_backfilled' });
    log({ level: 'error', message: 'store down', code: 'store_unavailable', status: 503 });
    expect(lines).toEqual([
      ['info', 'kyb-webhooks info stream_backfilled: gap backfilled'],
      ['error', 'kyb-webhooks error 503 store_unavailable: store down'],
    ]);
  });

  it("prints a receiver's debug and info lines once its level lets them through", async () => {
    const { console: out, lines } = capture();
    const receiver = createReceiver({
      secrets: { '1': 'console-secret' },
      logger: createConsoleLogger({ level: 'debug', console: out }),
    });
    receiver.on('kyb.data_request.refused', () => {});
    const delivery = await signer.sign(testEvents.dataRequestRefused());
    await receiver.receive({ method: 'POST', ...delivery });
    await receiver.receive({ method: 'POST', ...delivery });
    expect(lines.map(([level, line]) => `${level} ${line.split(':')[0]}`)).toEqual([
      'debug kyb-webhooks debug 200',
      'info kyb-webhooks info 200 duplicate',
    ]);
  });

  it.each(['toString', 'constructor', 'verbose'])('refuses level %s, naming the four levels', (level) => {
    expect(() => createConsoleLogger({ level: level as never })).toThrow(/level must be debug, info, warn or error/);
  });

  it('prints warn and error only by default', () => {
    const { console: out, lines } = capture();
    const log = createConsoleLogger({ console: out });
    log({ level: 'info', message: 'quiet' });
    log({ level: 'warn', message: 'loud' });
    expect(lines.map(([level]) => level)).toEqual(['warn']);
  });
});

describe('formatLogEntry', () => {
  it('puts event id, type and detail on the first line', () => {
    expect(
      formatLogEntry({
        level: 'warn',
        status: 401,
        code: 'attestation_invalid',
        message: 'delivery rejected: attestation_invalid',
        eventId: '01KB0000000000000000000001',
        eventType: 'kyb.data_request.released',
        detail: 'unexpected "aud" claim value',
      }),
    ).toBe(
      'kyb-webhooks warn 401 attestation_invalid: delivery rejected: attestation_invalid ' +
        '(event 01KB0000000000000000000001, kyb.data_request.released) — unexpected "aud" claim value',
    );
  });

  it('prints the error chain indented under the line, causes and aggregated errors included', () => {
    const text = formatLogEntry({
      level: 'error',
      message: 'handlers failed',
      error: {
        name: 'HandlerError',
        message: '2 handlers failed',
        errors: [{ name: 'Error', message: 'first' }],
        cause: { name: 'TypeError', message: 'fetch failed', code: 'ECONNREFUSED' },
      },
    });
    expect(text.split('\n')).toEqual([
      'kyb-webhooks error: handlers failed',
      '  HandlerError: 2 handlers failed',
      '    Error: first',
      '  caused by TypeError: fetch failed [ECONNREFUSED]',
    ]);
  });
});
