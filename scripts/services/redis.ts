import { findBinary } from './binaries.js';
import { startProcess } from './process.js';
import type { ServiceDefinition } from './service.js';

/** Redis 7 without persistence: the data is thrown away after the run, so nothing is written to disk. */
export const redis: ServiceDefinition = {
  name: 'redis',
  title: 'Redis',
  envVar: 'KYB_TEST_REDIS_URL',
  aptPackage: 'redis-server',
  locate() {
    const server = findBinary('redis-server');
    return server ? { ok: true, binaries: { server } } : { ok: false, missing: 'redis-server is not installed' };
  },
  async start(binaries, dir, port) {
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
        'no',
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
