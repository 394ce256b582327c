/**
 * The receiver every bench uses: both checks configured, fixed clock, a no-op handler per bench event type; a store,
 * an ordering or a telemetry layer when a bench measures one.
 */
import {
  createReceiver,
  type DedupeStore,
  type StreamOrdering,
  type Receiver,
  type ReceiverTelemetry,
  type SecretKeyring,
} from '@kyb-webhooks/core';
import type { JSONWebKeySet } from 'jose';
import { benchNow } from './clock.js';

export interface ReceiverConfig {
  secrets: SecretKeyring;
  issuer: string;
  audience: string;
  jwks: JSONWebKeySet;
}

export function createBenchReceiver(
  config: ReceiverConfig,
  store?: DedupeStore,
  ordering?: StreamOrdering,
  telemetry?: ReceiverTelemetry,
): Receiver {
  const receiver = createReceiver({
    secrets: config.secrets,
    attestation: { issuer: config.issuer, audience: config.audience, jwks: config.jwks },
    now: benchNow,
    ...(store ? { store } : {}),
    ...(ordering ? { ordering } : {}),
    ...(telemetry ? { telemetry } : {}),
  });
  const noop = async (): Promise<void> => {};
  return receiver.on('kyb.data_request.pending_approval', noop).on('kyb.data_request.released', noop);
}
