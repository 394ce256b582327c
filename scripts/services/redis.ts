import { findBinary } from './binaries.js';
import { startProcess } from './process.js';
import type { ServiceDefinition } from './service.js';

/**
 * Redis 7 without persistence: the data is thrown away after the run, so nothing is written to disk. A durable server
 * (a test that restarts it) appends every write to its AOF under `dir` before answering, and loads it again when
 * started on the same `dir`.
 */
export const redis: ServiceDefinition = {
  name: 'redis',
  title: 'Redis',
  envVar: 'KYB_TEST_REDIS_URL',
  aptPackage: 'redis-server',
  locate() {
    const server = findBinary('redis-server');
    return server ? { ok: true, binaries: { server } } : { ok: false, missing: 'redis-server is not installed' };
  },
  async start(binaries, dir, port, options = {}) {
    const process = await startProcess({
      label: 'redis-server',
      command: binaries.server!,
      args: [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        options.durable ? 'yes' : 'no',
        ...(options.durable ? ['--appendfsync', 'always'] : []),
        '--daemonize',
        'no',
        '--logfile',
        '',
      ],
      ready: /Ready to accept connections/,
      stopSignal: 'SIGTERM',
      timeoutMs: 10_000,
    });
    return { url: `redis://127.0.0.1:${port}`, process };
  },
};
