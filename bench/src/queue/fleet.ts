/**
 * Part 2 of the queue section: the throughput of a fleet of 1 to 4 worker processes (worker.ts, each running
 * `createQueueWorker(receiver, { concurrency })` over the engine), every handler taking 50 ms, on a backlog spread
 * over many streams so that the fleet can run them side by side.
 *
 * The four processes are started once per engine and stay; a measurement starts a worker in P of them, lets them
 * run `warmupS`, counts the events handled during `windowS` (each handler's end, stamped in the worker), then stops
 * them (stop() waits for their running jobs). The backlog is topped up before every round, a stream's events one
 * seq layer at a time (no two of a stream in flight), so every stream's events are enqueued in seq order. The order
 * of P rotates between rounds; the ratio to one process is taken within a round.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventQueue, Receiver } from '@kyb-webhooks/core';
import type { ChildHandle } from './child.js';
import type { Delivery } from './deliveries.js';
import { busyFraction, checkOrder, idealRate, newOrderCheck, windowRate, type OrderCheck } from './figures.js';
import { treeCpuMicros } from './proc.js';
import type { Handled } from './protocol.js';

export interface FleetSettings {
  rounds: number;
  processes: readonly number[];
  concurrency: number;
  handlerMs: number;
  streams: number;
  warmupS: number;
  windowS: number;
}

export interface FleetSample {
  processes: number;
  round: number;
  eventsPerSecond: number;
  /** The worker processes' CPU (user + system) over the window ÷ the events handled in it. */
  workerCpuMicrosPerEvent: number;
  /** The whole machine's CPU busy fraction over the window (2 cores: 1.0 is both full). */
  machineBusy: number;
  /**
   * This run's share of the machine over the window: the CPU of the bench process and all it started (database
   * servers, workers) ÷ (window × cores). NaN where /proc cannot be read.
   */
  runShare: number;
  /** Events left in the queue when the window ended: under the fleet's slots, the backlog ran dry. */
  backlogLeft: number;
}

export interface FleetResult {
  samples: FleetSample[];
  order: OrderCheck;
  enqueued: number;
  handled: number;
  /** Enqueues per second while topping up (through receiver.receive in the bench process). */
  fillRates: number[];
}

const FILL_MARGIN = 1.3;

/**
 * Enqueues deliveries `from`… through the receiver until `count` more are in the queue: a seq layer (one event of
 * every stream) at a time, the layer's events concurrently. Resolves the index after the last one.
 */
async function topUp(
  receiver: Receiver,
  make: (i: number) => Delivery,
  from: number,
  count: number,
  streams: number,
): Promise<number> {
  let next = from;
  // Whole layers only, so that every stream's seqs stay 0, 1, 2… (a layer starts at a multiple of `streams`).
  const end = from + Math.ceil(count / streams) * streams;
  while (next < end) {
    const layer = Array.from({ length: streams }, (_, k) => make(next + k));
    next += streams;
    await Promise.all(
      layer.map(async ({ headers, body }) => {
        const result = await receiver.receive({ method: 'POST', headers, body: new TextEncoder().encode(body) });
        if (result.status !== 200) throw new Error(`enqueue answered ${result.status} ${result.code ?? ''}`);
      }),
    );
  }
  return next;
}

export async function measureFleet(
  workers: readonly ChildHandle[],
  enqueueing: { receiver: Receiver; queue: EventQueue },
  make: (i: number) => Delivery,
  settings: FleetSettings,
  progress: (line: string) => void,
): Promise<FleetResult> {
  const handledAt: number[] = [];
  const order = newOrderCheck();
  for (const worker of workers) {
    worker.onHandled((events: Handled[]) => {
      for (const event of events) handledAt.push(event[0]);
      checkOrder(order, events);
    });
  }
  const samples: FleetSample[] = [];
  const fillRates: number[] = [];
  let enqueued = 0;
  const observed = new Map<number, number>();
  for (let round = 0; round < settings.rounds; round++) {
    const sequence = round % 2 === 0 ? [...settings.processes] : [...settings.processes].reverse();
    // What the round will take: the ideal rate, or past the first round at most 1.5× what it reached.
    const planned = sequence.reduce((sum, processes) => {
      const ideal = idealRate(processes, settings.concurrency, settings.handlerMs);
      const seen = observed.get(processes);
      const rate = seen === undefined ? ideal : Math.min(ideal, 1.5 * seen + 20);
      return sum + rate * (settings.warmupS + settings.windowS);
    }, 0);
    const need = Math.ceil(planned * FILL_MARGIN) - (enqueued - handledAt.length);
    if (need > 0) {
      progress(`queue: fleet: round ${round + 1}/${settings.rounds}: enqueuing ${need} events`);
      const started = Date.now();
      const next = await topUp(enqueueing.receiver, make, enqueued, need, settings.streams);
      fillRates.push(((next - enqueued) * 1000) / (Date.now() - started));
      enqueued = next;
    }
    for (const processes of sequence) {
      const active = workers.slice(0, processes);
      await Promise.all(
        active.map((worker) => worker.command({ type: 'start', concurrency: settings.concurrency }, 'started')),
      );
      await sleep(settings.warmupS * 1000);
      const cpuBefore = await Promise.all(active.map((worker) => worker.cpuMicros()));
      const machineBefore = cpus();
      const runBefore = treeCpuMicros();
      const from = Date.now();
      await sleep(settings.windowS * 1000);
      const to = Date.now();
      const runAfter = treeCpuMicros();
      const machineAfter = cpus();
      const cpuAfter = await Promise.all(active.map((worker) => worker.cpuMicros()));
      await Promise.all(active.map((worker) => worker.command({ type: 'stop' }, 'stopped')));
      const eventsPerSecond = windowRate(handledAt, from, to);
      const inWindow = (eventsPerSecond * (to - from)) / 1000;
      const cpu = cpuAfter.reduce((sum, value, i) => sum + value - cpuBefore[i]!, 0);
      const handledByEnd = handledAt.filter((at) => at < to).length;
      const sample: FleetSample = {
        processes,
        round,
        eventsPerSecond,
        workerCpuMicrosPerEvent: inWindow > 0 ? cpu / inWindow : Number.NaN,
        machineBusy: busyFraction(machineBefore, machineAfter),
        runShare: (runAfter - runBefore) / ((to - from) * 1000 * machineAfter.length),
        backlogLeft: enqueued - handledByEnd,
      };
      samples.push(sample);
      observed.set(processes, Math.max(observed.get(processes) ?? 0, eventsPerSecond));
      progress(
        `queue: fleet: round ${round + 1}/${settings.rounds}, ${processes} process${processes > 1 ? 'es' : ''}: ` +
          `${eventsPerSecond.toFixed(1)} events/s (ideal ${idealRate(processes, settings.concurrency, settings.handlerMs)}), ` +
          `machine ${(sample.machineBusy * 100).toFixed(0)}% busy, this run ${(sample.runShare * 100).toFixed(0)}%`,
      );
    }
  }
  return { samples, order, enqueued, handled: handledAt.length, fillRates };
}
