import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogin, type Login } from './login.js';
import { LOGIN_ERRORS } from './errors.js';
import { Sealer } from './sealed.js';
import { memoryTransactionStore } from './transaction-store.js';
import { COOKIE_SECRET, loginOptions, loginRequest, refusal, startProviderAndLogin } from './testing/flow.js';
import { type TestProvider } from './testing/provider.js';

// The login's transaction cookies as a browser sees them: what a callback with a missing, expired, altered, planted
// or replayed one is told, and which Set-Cookie lines clear abandoned ones. The sealing key is the one a site's own
// secret gives (an attacker who has it could forge anything; the tests use it to build cookies the checks must refuse).

let provider: TestProvider;
let login: Login;
beforeAll(async () => {
  ({ provider, login } = await startProviderAndLogin());
});
afterAll(() => provider?.stop());
afterEach(() => {
  vi.useRealTimers();
});

const sealer = new Sealer(COOKIE_SECRET, 'kyb-login transaction v1');

/** Name and value of a Set-Cookie line. */
function pairOf(setCookie: string): [string, string] {
  const pair = setCookie.split(';')[0]!;
  const at = pair.indexOf('=');
  return [pair.slice(0, at), pair.slice(at + 1)];
}

/** A login started in a fresh browser: its state, its Set-Cookie lines (transaction first, then binding). */
async function started(target: Login = login, cookies: string[] = []) {
  const start = await target.start(loginRequest('/auth/login', cookies));
  const state = start.url.searchParams.get('state')!;
  return { state, setCookie: start.setCookie, name: pairOf(start.setCookie[0]!)[0] };
}

/** The callback the login server would send for `state` (the code is never reached by these refusals). */
function callbackFor(state: string, cookies: string[]) {
  const query = new URLSearchParams({ state, code: 'a-code', iss: provider.issuer });
  return loginRequest(`/auth/callback?${query}`, cookies);
}

/** The transaction cookie re-sealed with `edit` applied to its payload, as a Set-Cookie line. */
async function resealed(setCookie: string, edit: (payload: Record<string, unknown>) => Record<string, unknown>) {
  const [name, value] = pairOf(setCookie);
  const payload = (await sealer.open(value)) as Record<string, unknown>;
  expect(payload).toEqual(expect.objectContaining({ jti: expect.any(String) }));
  const { iat: _iat, exp: _exp, ...rest } = payload;
  return `${name}=${await sealer.seal(edit(rest), 600)}; Path=/auth/callback`;
}

describe('a callback is refused, and told why', () => {
  it('without any transaction cookie: transaction_missing', async () => {
    const { state } = await started();
    const error = await refusal(login.finish(callbackFor(state, [])));
    expect(error).toMatchObject({
      code: 'transaction_missing',
      status: 400,
      message: LOGIN_ERRORS.transaction_missing.message,
      name: 'KybLoginError',
    });
    expect(error.detail).toMatch(/no transaction cookie on the callback/);
  });

  it('for another state while another login of this browser is pending: state_mismatch', async () => {
    const mine = await started();
    const other = await started();
    const error = await refusal(login.finish(callbackFor(other.state, mine.setCookie)));
    expect(error).toMatchObject({ code: 'state_mismatch', status: 400 });
    expect(error.detail).toMatch(/no pending login of this browser has the callback state/);
  });

  it('after the transaction cookie expired: transaction_missing (start again)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { state, setCookie } = await started();
    vi.setSystemTime(Date.now() + 601_000);
    const error = await refusal(login.finish(callbackFor(state, setCookie)));
    expect(error).toMatchObject({ code: 'transaction_missing', status: 400 });
    expect(error.detail).toMatch(/expired/);
  });

  it('still accepted just before it expires (its lifetime is the transaction TTL)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { state, setCookie } = await started();
    vi.setSystemTime(Date.now() + 590_000);
    // Past the cookie checks: the made-up code is what the login server refuses.
    expect((await refusal(login.finish(callbackFor(state, setCookie)))).code).toBe('code_exchange_failed');
  });

  it('with a transaction cookie that does not decrypt: transaction_invalid', async () => {
    const { state, setCookie } = await started();
    const [name, value] = pairOf(setCookie[0]!);
    const altered = `${name}=${value.slice(0, -4)}AAAA`;
    const error = await refusal(login.finish(callbackFor(state, [altered, setCookie[1]!])));
    expect(error).toMatchObject({ code: 'transaction_invalid', status: 400 });
    expect(error.detail).toMatch(/did not decrypt/);
  });

  it('with a sealed transaction that has no state: transaction_invalid', async () => {
    const { state, setCookie } = await started();
    const cookie = await resealed(setCookie[0]!, ({ tx, ...rest }) => ({
      ...rest,
      tx: { ...(tx as object), state: undefined },
    }));
    const error = await refusal(login.finish(callbackFor(state, [cookie, setCookie[1]!])));
    expect(error).toMatchObject({
      code: 'transaction_invalid',
      status: 400,
      message: LOGIN_ERRORS.transaction_invalid.message,
    });
    expect(error.detail).toMatch(/incomplete/);
    const without = await resealed(setCookie[0]!, ({ tx: _tx, ...rest }) => rest);
    expect((await refusal(login.finish(callbackFor(state, [without, setCookie[1]!])))).code).toBe(
      'transaction_invalid',
    );
  });

  it('with a sealed transaction that has no PKCE verifier: transaction_invalid, before any code exchange', async () => {
    const { state, setCookie } = await started();
    const cookie = await resealed(setCookie[0]!, ({ tx, ...rest }) => ({
      ...rest,
      tx: { ...(tx as object), codeVerifier: undefined },
    }));
    const error = await refusal(login.finish(callbackFor(state, [cookie, setCookie[1]!])));
    expect(error).toMatchObject({ code: 'transaction_invalid', status: 400 });
    expect(error.detail).toMatch(/incomplete/);
  });

  it('when the sealed state is not the callback’s, even under the cookie name of the callback’s state', async () => {
    const { state, setCookie } = await started();
    const other = await started();
    const cookie = await resealed(setCookie[0]!, ({ tx, ...rest }) => ({
      ...rest,
      tx: { ...(tx as object), state: other.state },
    }));
    const error = await refusal(login.finish(callbackFor(state, [cookie, setCookie[1]!])));
    expect(error).toMatchObject({ code: 'state_mismatch', status: 400 });
    expect(error.detail).toMatch(/not this transaction/);
  });

  it('with a store, when the sealed state is not the callback’s', async () => {
    const stored = await createLogin(loginOptions(provider, { transactionStore: memoryTransactionStore() }));
    const { state, setCookie } = await started(stored);
    const noState = await resealed(setCookie[0]!, ({ state: _state, ...rest }) => rest);
    expect(await refusal(stored.finish(callbackFor(state, [noState, setCookie[1]!])))).toMatchObject({
      code: 'transaction_invalid',
      detail: expect.stringMatching(/incomplete/),
    });
    const otherState = await resealed(setCookie[0]!, (payload) => ({ ...payload, state: `${state}x` }));
    expect(await refusal(stored.finish(callbackFor(state, [otherState, setCookie[1]!])))).toMatchObject({
      code: 'state_mismatch',
    });
    // Neither refusal used the stored transaction up.
    expect((await refusal(stored.finish(callbackFor(state, setCookie)))).code).toBe('code_exchange_failed');
  });

  it('with a store that no longer has the transaction: transaction_missing', async () => {
    const stored = await createLogin(
      loginOptions(provider, { transactionStore: { set: async () => {}, take: async () => undefined } }),
    );
    const { state, setCookie } = await started(stored);
    const error = await refusal(stored.finish(callbackFor(state, setCookie)));
    expect(error).toMatchObject({ code: 'transaction_missing', status: 400 });
    expect(error.detail).toMatch(/not in the store/);
  });

  it('says whether the binding cookie was missing or another browser’s for a planted transaction cookie', async () => {
    const attacker = await started();
    const victim = await started();
    const missing = await refusal(login.finish(callbackFor(attacker.state, [attacker.setCookie[0]!])));
    expect(missing).toMatchObject({ code: 'state_mismatch' });
    expect(missing.detail).toMatch(/the kyb-login-bind cookie is missing/);
    const another = await refusal(
      login.finish(callbackFor(attacker.state, [attacker.setCookie[0]!, victim.setCookie[1]!])),
    );
    expect(another).toMatchObject({ code: 'state_mismatch' });
    expect(another.detail).toMatch(/the kyb-login-bind cookie is another/);
  });

  it('without a binding in the sealed transaction: state_mismatch', async () => {
    const { state, setCookie } = await started();
    const cookie = await resealed(setCookie[0]!, ({ bind: _bind, ...rest }) => rest);
    expect(await refusal(login.finish(callbackFor(state, [cookie, setCookie[1]!])))).toMatchObject({
      code: 'state_mismatch',
      detail: expect.stringMatching(/not started in this browser/),
    });
  });

  it('when replayed: transaction_replayed with its message', async () => {
    const { state, setCookie } = await started();
    await refusal(login.finish(callbackFor(state, setCookie)));
    const error = await refusal(login.finish(callbackFor(state, setCookie)));
    expect(error).toMatchObject({
      code: 'transaction_replayed',
      status: 400,
      message: LOGIN_ERRORS.transaction_replayed.message,
    });
    expect(error.detail).toMatch(/already used/);
  });
});

describe('abandoned transaction cookies', () => {
  /** The names a list of Set-Cookie lines deletes, each checked to be a deletion on the callback path. */
  function cleared(lines: string[]): string[] {
    return lines
      .filter((line) => line.startsWith('kyb-login-tx-'))
      .map((line) => {
        expect(line).toMatch(/; Path=\/auth\/callback(;|$)/);
        expect(line).toMatch(/; Max-Age=0(;|$)/);
        return pairOf(line)[0];
      });
  }

  /** `count` logins started one second apart (each in its own browser), oldest first. */
  async function pendingLogins(count: number, startAt: number) {
    vi.useFakeTimers({ toFake: ['Date'] });
    const logins = [];
    for (let i = 0; i < count; i++) {
      vi.setSystemTime(startAt + i * 1000);
      logins.push(await started());
    }
    return logins;
  }

  it('the callback clears the oldest beyond four others, by their sealed start time, not their order', async () => {
    const logins = await pendingLogins(7, Date.now());
    const [own, ...others] = logins.reverse(); // newest first
    // In the header newest first: the order does not decide, the sealed start time does.
    const cookies = [own!.setCookie[0]!, ...others.map((l) => l.setCookie[0]!), own!.setCookie[1]!];
    const lines = await login.callbackCleanupCookies(callbackFor(own!.state, cookies));
    expect(cleared(lines).sort()).toEqual([others[4]!.name, others[5]!.name].sort());
  });

  it('started within one second, the later in the Cookie header counts as newer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now());
    const logins = [];
    for (let i = 0; i < 7; i++) logins.push(await started());
    const [own, ...others] = logins;
    const cookies = [...others.map((l) => l.setCookie[0]!), own!.setCookie[0]!];
    const lines = await login.callbackCleanupCookies(callbackFor(own!.state, cookies));
    expect(cleared(lines).sort()).toEqual([others[0]!.name, others[1]!.name].sort());
  });

  it('an unreadable one counts as older than any, even one sealed in the same second at the epoch', async () => {
    const logins = await pendingLogins(6, 0);
    vi.setSystemTime(0);
    const [own, ...others] = logins.reverse();
    const unreadable = 'kyb-login-tx-0000000000000=not-a-sealed-value';
    // Unreadable, newest by its place in the header: still the first to go.
    const cookies = [...others.map((l) => l.setCookie[0]!), own!.setCookie[0]!, unreadable];
    const lines = await login.callbackCleanupCookies(callbackFor(own!.state, cookies));
    expect(cleared(lines).sort()).toEqual(['kyb-login-tx-0000000000000', others[4]!.name].sort());
  });

  it('only cookies named like transaction cookies count', async () => {
    const logins = await pendingLogins(5, Date.now());
    const [own, ...others] = logins.reverse();
    const lookalikes = ['kyb-login-tx-short=x', 'kyb-login-tx-0000000000000x=y', 'kyb-login-tx-ABCDEFGHIJKLM=z'];
    const cookies = [...lookalikes, ...others.map((l) => l.setCookie[0]!), own!.setCookie[0]!];
    expect(cleared(await login.callbackCleanupCookies(callbackFor(own!.state, cookies)))).toEqual([]);
  });

  it('a callback without a cookie of its own keeps five others (as many as can pend), not four', async () => {
    const logins = await pendingLogins(6, Date.now());
    const forged = await started();
    const five = logins.slice(1).map((l) => l.setCookie[0]!);
    expect(cleared(await login.callbackCleanupCookies(callbackFor(forged.state, five)))).toEqual([]);
    const six = logins.map((l) => l.setCookie[0]!);
    expect(cleared(await login.callbackCleanupCookies(callbackFor(forged.state, six)))).toEqual([logins[0]!.name]);
  });

  it('the start route clears the oldest pending login of a browser beyond five, on the callback path', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t0 = Date.now();
    let jar: string[] = [];
    const names: string[] = [];
    let lines: string[] = [];
    for (let i = 0; i < 6; i++) {
      vi.setSystemTime(t0 + i * 1000);
      const start = await login.start(loginRequest('/auth/login', jar));
      lines = start.setCookie;
      names.push(pairOf(start.setCookie[0]!)[0]);
      jar = [start.setCookie[1]!]; // the binding cookie; the transaction cookies only go to the callback path
    }
    expect(cleared(lines.slice(2))).toEqual([names[0]]);
  });
});

describe('the pending logins a Cookie header can carry', () => {
  it('the start route keeps pending logins of at most 6144 bytes together, and clears the older one beyond', async () => {
    const medium = await createLogin(
      loginOptions(provider, { redirectUri: `http://127.0.0.1:9/${'x'.repeat(1000)}/auth/callback` }),
    );
    const first = await medium.start(loginRequest('/auth/login'), { returnTo: `/${'a'.repeat(1023)}` });
    const [firstName, firstValue] = pairOf(first.setCookie[0]!);
    const firstBytes = firstName.length + 1 + firstValue.length;
    /** The second login of the browser, with a return path of `length`: its cookie's bytes, and what it clears. */
    const second = async (length: number) => {
      const start = await medium.start(loginRequest('/auth/login', [first.setCookie[1]!]), {
        returnTo: `/${'b'.repeat(length)}`,
      });
      return {
        bytes: start.setCookie[0]!.split(';')[0]!.length,
        cleared: start.setCookie.slice(2).map((line) => pairOf(line)[0]),
      };
    };
    // The longest second return path that leaves the first login pending (binary search).
    let low = 1;
    let high = 1023;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if ((await second(mid)).cleared.length === 0) low = mid;
      else high = mid - 1;
    }
    const kept = await second(low);
    expect(firstBytes + kept.bytes).toBeLessThanOrEqual(6144);
    const beyond = await second(low + 1);
    expect(firstBytes + beyond.bytes).toBeGreaterThan(6144);
    expect(beyond.cleared).toEqual([firstName]);
  });
});

describe('the transaction cookie size', () => {
  /** A login whose redirect URI (sealed in the cookie too) leaves room for a return path shorter than 1024 bytes. */
  const longRedirect = (pad: number) =>
    createLogin(loginOptions(provider, { redirectUri: `http://127.0.0.1:9/${'x'.repeat(2000 + pad)}/auth/callback` }));

  /** The longest return path `target` accepts (binary search), and the bytes of its cookie's name and value. */
  async function longestAccepted(target: Login): Promise<{ length: number; bytes: number }> {
    let low = 1;
    let high = 1024;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      try {
        await target.start(loginRequest('/auth/login'), { returnTo: `/${'a'.repeat(mid)}` });
        low = mid;
      } catch {
        high = mid - 1;
      }
    }
    const longest = await target.start(loginRequest('/auth/login'), { returnTo: `/${'a'.repeat(low)}` });
    return { length: low, bytes: longest.setCookie[0]!.split(';')[0]!.length };
  }

  it('the longest return path that fits gives at most 4096 bytes of name and value; one more byte is refused', async () => {
    const login = await longRedirect(0);
    const { length, bytes } = await longestAccepted(login);
    expect(bytes).toBeLessThanOrEqual(4096);
    expect(bytes).toBeGreaterThan(4090);
    const error = await refusal(login.start(loginRequest('/auth/login'), { returnTo: `/${'a'.repeat(length + 1)}` }));
    expect(error).toMatchObject({ code: 'return_path_invalid', status: 400 });
    expect(error.detail).toMatch(/would pass 4096 bytes/);
  });

  it('a cookie of exactly 4096 bytes of name and value is still set', async () => {
    // The sealed value grows by one or two characters a byte: one of four redirect URI lengths lands on 4096.
    const sizes = [];
    for (let pad = 0; pad < 4; pad++) sizes.push((await longestAccepted(await longRedirect(pad))).bytes);
    expect(Math.max(...sizes)).toBe(4096);
  });
});
