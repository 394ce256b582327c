/**
 * Part 1 of the queue section: the answer the service gets, over real HTTP (node:http and `@kyb-webhooks/node`), from
 * a receiver whose handler takes 50 ms, inline against queue mode on each engine. One server process per mode;
 * autocannon in the bench process with a fixed number of connections (the sender's concurrency); in every round
 * each server gets one run, in an order that rotates, so a ratio queue / inline is taken within one round.
 */
import autocannon, { type AutocannonRequest } from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildHandle } from './child.js';
import type { ServerMode } from './protocol.js';

export interface AnswerSettings {
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
}

export interface AnswerSample {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The server's CPU (user + system) over the run ÷ the requests answered. */
  cpuMicrosPerRequest: number;
}

async function runLoad(
  server: ChildHandle,
  requests: AutocannonRequest[],
  durationS: number,
  connections: number,
): Promise<AnswerSample> {
  const before = await server.cpuMicros();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections,
    duration: durationS,
    requests,
  });
  // Requests still in flight when autocannon stopped: let them finish before reading the CPU.
  await sleep(100);
  const after = await server.cpuMicros();
  const completed = result.requests.total;
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0 || completed === 0) {
    const codes = Object.entries(result.statusCodeStats)
      .map(([code, { count }]) => `${code}×${count}`)
      .join(', ');
    throw new Error(
      `${server.label}: ${completed} completed, ${result.errors} errors, ${result.timeouts} timeouts, status ${codes}`,
    );
  }
  return {
    requestsPerSecond: completed / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuMicrosPerRequest: (after - before) / completed,
  };
}

/** Every mode's samples, one per round, in round order. */
export async function measureAnswers(
  servers: ReadonlyMap<ServerMode, ChildHandle>,
  requests: AutocannonRequest[],
  settings: AnswerSettings,
  progress: (line: string) => void,
): Promise<Map<ServerMode, AnswerSample[]>> {
  const modes = [...servers.keys()];
  for (const mode of modes) {
    progress(`queue: answers: warming up ${mode} (${settings.warmupS} s)`);
    await runLoad(servers.get(mode)!, requests, settings.warmupS, settings.connections);
  }
  const samples = new Map<ServerMode, AnswerSample[]>(modes.map((mode) => [mode, []]));
  for (let round = 0; round < settings.rounds; round++) {
    const order = modes.map((_, k) => modes[(k + round) % modes.length]!);
    for (const mode of order) {
      const sample = await runLoad(servers.get(mode)!, requests, settings.durationS, settings.connections);
      samples.get(mode)!.push(sample);
      progress(
        `queue: answers: round ${round + 1}/${settings.rounds} ${mode}: ${Math.round(sample.requestsPerSecond)}/s, ` +
          `p50 ${sample.p50Ms} ms, p99 ${sample.p99Ms} ms`,
      );
    }
  }
  return samples;
}
