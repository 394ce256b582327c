/**
 * The queue section's deliveries: HMAC-only `kyb.data_request.pending_approval` events (the bench's template, signed
 * by the test kit on the bench's pinned clock), each with a fresh event_id and its own expires_at, spread over
 * `streams` streams in turn with seq 0, 1, 2… per stream, so queue mode has many streams to run side by side, as a
 * service with many data requests open would send them.
 */
import { ulid, type TestSigner } from '@kyb-webhooks/testing';
import type { AutocannonRequest } from 'autocannon';
import { BENCH_NOW_MS, benchEvent, withOwnTimes } from '../fixtures.js';
import { streamIdOf } from './protocol.js';

export interface Delivery {
  streamIndex: number;
  seq: number;
  headers: Record<string, string>;
  body: string;
}

/** Makes delivery `i` of a run: stream `i % streams`, seq `floor(i / streams)`. */
export function deliveryMaker(signer: TestSigner, tag: string, streams: number): (i: number) => Delivery {
  const template = benchEvent('hmac');
  const headers = {
    'content-type': 'application/json',
    'service-delivery-attempt': '1',
    'service-kyb-api-version': template.api_version,
    'user-agent': 'service-kyb-webhooks/1',
  };
  return (i) => {
    const streamIndex = i % streams;
    const seq = Math.floor(i / streams);
    const streamId = streamIdOf(tag, streamIndex);
    const eventId = ulid(BENCH_NOW_MS);
    const event = withOwnTimes(template, i);
    const body = JSON.stringify({
      ...event,
      event_id: eventId,
      stream_id: streamId,
      seq,
      data: { ...event.data, request_id: streamId },
    });
    return {
      streamIndex,
      seq,
      body,
      headers: { ...headers, 'service-event-id': eventId, 'service-kyb-signature': signer.hmacHeader(body) },
    };
  };
}

/**
 * One request template for autocannon whose every use is the run's next delivery (built and signed in this
 * process, a few µs each, as the HTTP section's fresh HMAC requests are).
 */
export function loadRequests(make: (i: number) => Delivery, path: string): AutocannonRequest[] {
  let next = 0;
  return [
    {
      method: 'POST',
      path,
      setupRequest(request) {
        const { headers, body } = make(next++);
        return { ...request, headers, body };
      },
    },
  ];
}
