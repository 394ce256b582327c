import type { ServiceName } from './service.js';

const ENV_VARS: Record<ServiceName, { url: string; title: string; apt: string }> = {
  redis: { url: 'KYB_TEST_REDIS_URL', title: 'Redis', apt: 'redis-server' },
  postgres: { url: 'KYB_TEST_POSTGRES_URL', title: 'PostgreSQL', apt: 'postgresql-15' },
  mysql: { url: 'KYB_TEST_MYSQL_URL', title: 'MariaDB/MySQL', apt: 'mariadb-server' },
};

/** The URL of a test server, or why there is none (the tests that need it are then skipped with that message). */
export type TestService = { url: string; skipReason?: undefined } | { url?: undefined; skipReason: string };

/**
 * The server a store test runs against. The vitest globalSetup (scripts/services/global-setup.ts) starts it and puts
 * its URL in KYB_TEST_<NAME>_URL; the setup also finds which test files need which server by looking for
 * `testService('<name>')` in them, so call it with a literal name.
 *
 * @example
 * ```ts
 * const redis = testService('redis')
 * describe.skipIf(!redis.url)(`redis store ${redis.skipReason ?? ''}`, () => { ... })
 * ```
 */
export function testService(name: ServiceName): TestService {
  const { url: envVar, title, apt } = ENV_VARS[name];
  const url = process.env[envVar];
  if (url) return { url };
  const why = process.env[`${envVar.replace(/_URL$/, '')}_UNAVAILABLE`] ?? `${envVar} is not set`;
  return {
    skipReason:
      `skipped: no ${title} server (${why}). Install it (apt-get install ${apt}) so the test run starts one, ` +
      `or point ${envVar} at a running server; with CI=true this fails instead.`,
  };
}
