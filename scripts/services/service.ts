import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from './ports.js';
import type { RunningProcess } from './process.js';

/** The servers the store tests need, by the name tests ask for them with. */
export type ServiceName = 'redis' | 'postgres' | 'mysql';

/** How one kind of server is found, installed and started. */
export interface ServiceDefinition {
  name: ServiceName;
  /** What the server is, for messages: "Redis", "PostgreSQL", "MariaDB". */
  title: string;
  /** Tests read the server's URL from this variable; when the user already set it, nothing is started. */
  envVar: string;
  /** The Debian package that provides the binaries. */
  aptPackage: string;
  /** The binaries, or a sentence saying which one is missing. */
  locate(): { ok: true; binaries: Record<string, string> } | { ok: false; missing: string };
  /**
   * Initialise a data directory under `dir` (unless it holds one already: a restart) and start the server on `port`;
   * resolves once it accepts connections.
   */
  start(
    binaries: Record<string, string>,
    dir: string,
    port: number,
    options?: ServerOptions,
  ): Promise<{ url: string; process: RunningProcess }>;
}

/** How a test wants its own server run (the shared servers of a test run take the defaults). */
export interface ServerOptions {
  /**
   * Keep every write the server acknowledged across a stop (even an immediate one) and a start on the same `dir` and
   * port: Redis appends to its AOF with fsync always, PostgreSQL commits synchronously. For tests that restart the
   * server while clients write; the default trades that away for speed, as the data is thrown away after the run.
   */
  durable?: boolean;
}

export interface StartedService {
  name: ServiceName;
  url: string;
  port: number;
  process: RunningProcess;
  ms: number;
}

/** Output of a server that lost the race for its port to another process: worth a retry on a new port. */
const PORT_TAKEN = /address already in use|could not bind|bind on tcp\/ip port|errno=98/i;

/** Start a server on a free port, retrying with a new port when another process took the first one meanwhile. */
export async function startService(definition: ServiceDefinition, root: string): Promise<StartedService> {
  const located = definition.locate();
  if (!located.ok) throw new Error(located.missing);
  const begin = performance.now();
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const dir = join(root, `${definition.name}-${attempt}`);
    await mkdir(dir, { recursive: true });
    try {
      const { url, process } = await definition.start(located.binaries, dir, port);
      return { name: definition.name, url, port, process, ms: Math.round(performance.now() - begin) };
    } catch (error) {
      if (attempt >= 3 || !PORT_TAKEN.test(String((error as Error).message))) throw error;
    }
  }
}
