// The trace context a queued event carries to its worker: what the telemetry layer injected, kept only as a few
// short strings, whatever the layer returned or the queue handed back.
import { describe, expect, it } from 'vitest';
import { carrierOf, injectedCarrier } from './carrier.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('carrierOf', () => {
  it('keeps the string entries of an object', () => {
    expect(carrierOf({ traceparent: TRACEPARENT, tracestate: 'kyb=1' })).toEqual({
      traceparent: TRACEPARENT,
      tracestate: 'kyb=1',
    });
  });

  it('drops what is not a string, and entries over 512 characters of key or value (512 is kept)', () => {
    const carrier = carrierOf({ traceparent: TRACEPARENT, n: 1, o: {}, ['k'.repeat(513)]: 'v', long: 'v'.repeat(513) });
    expect(carrier).toEqual({ traceparent: TRACEPARENT });
    expect(carrierOf({ edge: 'v'.repeat(512) })).toEqual({ edge: 'v'.repeat(512) });
    expect(carrierOf({ ['k'.repeat(512)]: 'v' })).toEqual({ ['k'.repeat(512)]: 'v' });
  });

  it('keeps at most 8 entries', () => {
    const many = Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`k${index}`, 'v']));
    expect(Object.keys(carrierOf(many)!)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
  });

  it('is undefined for anything but an object with a string entry', () => {
    for (const value of [undefined, null, 'traceparent', 42, [TRACEPARENT], {}, { n: 1 }]) {
      expect(carrierOf(value)).toBeUndefined();
    }
  });

  it('keeps a "__proto__" key as a plain entry, never as a prototype', () => {
    const carrier = carrierOf(JSON.parse('{"__proto__":"x","traceparent":"t"}'))!;
    expect(Object.getPrototypeOf(carrier)).toBeNull();
    expect(Object.entries(carrier)).toEqual([
      ['__proto__', 'x'],
      ['traceparent', 't'],
    ]);
  });
});

describe('injectedCarrier', () => {
  it("is the layer's inject(), checked", () => {
    expect(
      injectedCarrier({ around: (_o, _t, run) => run(), inject: () => ({ traceparent: TRACEPARENT, n: 1 }) as never }),
    ).toEqual({
      traceparent: TRACEPARENT,
    });
  });

  it('is undefined without a layer, without inject, or when inject throws', () => {
    expect(injectedCarrier(undefined)).toBeUndefined();
    expect(injectedCarrier({ around: (_o, _t, run) => run() })).toBeUndefined();
    const throwing = {
      around: <R>(_o: unknown, _t: unknown, run: () => R) => run(),
      inject(): Record<string, string> {
        throw new Error('propagator failed');
      },
    };
    expect(injectedCarrier(throwing)).toBeUndefined();
  });

  it('is not asked while the layer records nothing (enabled() false or throwing)', () => {
    let asked = 0;
    const inject = () => {
      asked += 1;
      return { traceparent: TRACEPARENT };
    };
    const around = <R>(_o: unknown, _t: unknown, run: () => R) => run();
    expect(injectedCarrier({ around, inject, enabled: () => false })).toBeUndefined();
    const broken = () => {
      throw new Error('meter provider failed');
    };
    expect(injectedCarrier({ around, inject, enabled: broken })).toBeUndefined();
    expect(asked).toBe(0);
    expect(injectedCarrier({ around, inject, enabled: () => true })).toEqual({ traceparent: TRACEPARENT });
    expect(asked).toBe(1);
  });
});
