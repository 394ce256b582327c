import Database from 'better-sqlite3';
import mysql from 'mysql2';
import mysqlPromise from 'mysql2/promise';
import pg from 'pg';
import { expectConfigInvalid } from '@kyb-webhooks/testing/store-suite';
import { afterAll, describe, expect, it } from 'vitest';
import { createMySqlStore } from './mysql/store.js';
import { createPostgresStore } from './postgres/store.js';
import { createSqliteStore } from './sqlite/store.js';

// The drivers' real objects, never connected: creating a store must not touch a server.
const pgPool = new pg.Pool({ host: '127.0.0.1', port: 1 });
const pgClient = new pg.Client({ host: '127.0.0.1', port: 1 });
const mysqlPool = mysqlPromise.createPool({ host: '127.0.0.1', port: 1 });
const mysqlCallbackPool = mysql.createPool({ host: '127.0.0.1', port: 1 });
const sqlite = new Database(':memory:');
afterAll(async () => {
  await pgPool.end();
  await mysqlPool.end();
  mysqlCallbackPool.end(() => {});
  sqlite.close();
});
const badTable = 'events; DROP TABLE users';

type Case = [string, unknown, string[]];

describe('createPostgresStore refuses a bad configuration at creation', () => {
  it.each<Case>([
    ['no options', undefined, ['createPostgresStore needs an options object', 'new pg.Pool(']],
    ['neither pool nor client', {}, ['`pool` is missing: pass { pool } (a pg.Pool) or { client } (a pg.Client)']],
    ['both pool and client', { pool: pgPool, client: pgClient }, ['`pool` and `client` are both set']],
    [
      'a connection string as pool',
      { pool: 'postgres://localhost/db' },
      ['`pool` must be an object with query methods', 'got a string'],
    ],
    [
      'a connection string option',
      { connectionString: 'postgres://localhost/db' },
      ['`connectionString` is not an option: did you mean `pool`?'],
    ],
    ['an object without query', { client: {} }, ['`client` has no query method']],
    ['a misspelt pool', { pol: pgPool }, ['`pol` is not an option: did you mean `pool`?']],
    [
      'tableName instead of table',
      { pool: pgPool, tableName: 'events' },
      ['`tableName` is not an option: did you mean `table`?'],
    ],
    ['a table name that is not an identifier', { pool: pgPool, table: badTable }, ['`table` is invalid', 'identifier']],
    ['a table name that is not a string', { pool: pgPool, table: 42 }, ['`table` is invalid', 'identifier']],
    [
      'preparedStatements as a string',
      { pool: pgPool, preparedStatements: 'false' },
      ['`preparedStatements` must be true or false, got a string'],
    ],
  ])('%s', (_name, options, words) => {
    const error = expectConfigInvalid(() => createPostgresStore(options as never));
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain('createPostgresStore');
    for (const word of words) expect(error.message).toContain(word);
  });

  it.each<[string, object]>([
    ['a pg.Pool', { pool: pgPool }],
    ['a pg.Client', { client: pgClient }],
    [
      'a schema-qualified table and no prepared statements',
      { pool: pgPool, table: 'audit.kyb_webhook_events', preparedStatements: false },
    ],
  ])('accepts %s', (_name, options) => {
    expect(createPostgresStore(options as never).table).toBeTypeOf('string');
  });
});

describe('createMySqlStore refuses a bad configuration at creation', () => {
  it.each<Case>([
    ['no options', undefined, ['createMySqlStore needs an options object', 'mysql2/promise']],
    ['no pool', {}, ['`pool` is missing', 'mysql2/promise']],
    [
      'a callback-style mysql2 pool',
      { pool: mysqlCallbackPool },
      ['`pool` is a callback-style mysql2 pool', 'pool.promise()'],
    ],
    ['an object without query', { pool: { execute() {} } }, ['`pool` has no query method']],
    ['client instead of pool', { client: mysqlPool }, ['`client` is not an option: did you mean `pool`?']],
    [
      'a table name that is not an identifier',
      { pool: mysqlPool, table: badTable },
      ['`table` is invalid', 'identifier'],
    ],
    [
      'a Postgres option',
      { pool: mysqlPool, preparedStatements: true },
      ['`preparedStatements` is not an option; the options are pool, table.'],
    ],
  ])('%s', (_name, options, words) => {
    const error = expectConfigInvalid(() => createMySqlStore(options as never));
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain('createMySqlStore');
    for (const word of words) expect(error.message).toContain(word);
  });

  it('accepts a mysql2/promise pool and a qualified table', () => {
    expect(createMySqlStore({ pool: mysqlPool as never, table: 'shop.kyb_webhook_events' }).table).toBe(
      'shop.kyb_webhook_events',
    );
  });
});

describe('createSqliteStore refuses a bad configuration at creation', () => {
  it.each<Case>([
    ['no options', undefined, ['createSqliteStore needs an options object', './kyb-webhooks.sqlite']],
    ['neither database nor filename', {}, ['`database` is missing', '{ filename:']],
    [
      'both database and filename',
      { database: sqlite, filename: './x.sqlite' },
      ['`database` and `filename` are both set'],
    ],
    ['an empty filename (an unset environment variable)', { filename: '' }, ['`filename` is empty']],
    [
      'a filename that is not a string',
      { filename: new URL('file:///tmp/x.sqlite') },
      ['`filename` must be a string', 'got an instance of URL'],
    ],
    [
      'a filename as database',
      { database: './x.sqlite' },
      ['`database` must be an object with prepare, exec, transaction and close methods', 'got a string'],
    ],
    [
      'a database without transaction',
      { database: { prepare() {}, exec() {}, close() {} } },
      ['`database` has no transaction method'],
    ],
    ['path instead of filename', { path: './x.sqlite' }, ['`path` is not an option: did you mean `filename`?']],
    [
      'a table name that is not an identifier',
      { filename: './x.sqlite', table: badTable },
      ['`table` is invalid', 'identifier'],
    ],
  ])('%s', (_name, options, words) => {
    const error = expectConfigInvalid(() => createSqliteStore(options as never));
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain('createSqliteStore');
    for (const word of words) expect(error.message).toContain(word);
  });

  it('accepts an open better-sqlite3 database and works with it', async () => {
    const store = createSqliteStore({ database: sqlite, table: 'options_test_events' });
    await store.ensureSchema();
    expect((await store.claim('01JTESTOPTIONS0000000000000', { leaseMs: 1_000 })).status).toBe('acquired');
  });

  it('accepts a filename without opening it at creation', () => {
    expect(createSqliteStore({ filename: ':memory:' }).table).toBe('kyb_webhook_events');
  });
});
