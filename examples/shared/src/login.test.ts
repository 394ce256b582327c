import { KybLoginError } from '@kyb-webhooks/login';
import { describe, expect, it } from 'vitest';
import { accountPage, LOGIN_ENV, loginFromEnv, userIdOnPage, type LoginEnvName } from './login.js';

const complete: Record<LoginEnvName, string> = {
  KYB_AUTH_URL: 'http://login.example.test',
  KYB_CLIENT_ID: 'merchant-backend',
  KYB_CLIENT_SECRET: 'client-secret',
  KYB_REDIRECT_URI: 'http://127.0.0.1:3000/auth/callback',
  KYB_LOGIN_AUDIENCE: 'https://api.merchant.test',
  LOGIN_COOKIE_SECRET: 'a cookie secret of at least thirty-two bytes',
};

async function failure(env: NodeJS.ProcessEnv): Promise<Error> {
  const error = await loginFromEnv(env, () => {}).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof Error)) throw new Error('expected loginFromEnv to reject');
  return error;
}

describe('the examples\u2019 login configuration', () => {
  it('is off when no login variable is set, so the webhook part runs alone', async () => {
    await expect(loginFromEnv({ KYB_SECRET_V1: 'whsec_x', PORT: '3000' }, () => {})).resolves.toBeUndefined();
  });

  it.each(Object.keys(LOGIN_ENV) as LoginEnvName[])(
    'names %s when it is the one missing, with what to set it to',
    async (name) => {
      const { message } = await failure({ ...complete, [name]: '' });
      expect(message).toContain(`Set ${name} (${LOGIN_ENV[name]})`);
      for (const other of Object.keys(LOGIN_ENV).filter((n) => n !== name)) expect(message).not.toContain(other);
    },
  );

  it('names every missing variable at once', async () => {
    const { message } = await failure({ KYB_AUTH_URL: complete.KYB_AUTH_URL });
    for (const name of Object.keys(LOGIN_ENV).filter((n) => n !== 'KYB_AUTH_URL')) expect(message).toContain(name);
  });

  it('refuses an http:// login server other than this machine', async () => {
    const error = await failure(complete);
    expect(error).toBeInstanceOf(KybLoginError);
    expect((error as KybLoginError).code).toBe('config_invalid');
  });

  it('shows the user id on the account page, escaped as HTML', () => {
    expect(userIdOnPage(accountPage('0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c'))).toBe(
      '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c',
    );
    expect(accountPage('<script>')).not.toContain('<script>');
  });
});
