import { describe, expect, it } from 'vitest';
import { bundleForWebRuntime } from '../../../scripts/web-bundle.js';
import { createTestSigner, testEvents } from '../test-kit.js';

// Bundles the core as a Worker/Deno/Bun bundler would (no "node" condition) and runs the bundle: it must contain no
// node: import and no Buffer, pick the Web Crypto module through "#crypto", and still verify real deliveries.
describe('core on a Web-standard runtime', () => {
  it('bundles without node: or Buffer and verifies an HMAC and an attestation with Web Crypto', async () => {
    const bundle = await bundleForWebRuntime<typeof import('./index.js')>(new URL('./index.ts', import.meta.url));
    const code = bundle.code;
    expect(code).not.toMatch(/["']node:/);
    expect(code).not.toMatch(/\bBuffer\b/);
    // The Web Crypto module's name, on its line (a mutation run instruments the literal, so not `name: "web"` exactly).
    expect(code).toMatch(/name: [^\n]*"web"/);

    const core = await bundle.load();
    const signer = await createTestSigner();
    const receiver = core.createReceiver({
      secrets: { ...signer.secrets },
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    });
    const seen: string[] = [];
    receiver.onAny((event: { event: string }) => {
      seen.push(event.event);
    });
    for (const envelope of [testEvents.dataRequestPendingApproval(), testEvents.dataRequestReleased()]) {
      const { headers, body } = await signer.sign(envelope);
      expect((await receiver.receive({ method: 'POST', headers: new Headers(headers), body })).status).toBe(200);
    }
    const forged = await signer.sign(testEvents.dataRequestRefused(), { secret: 'forged' });
    expect((await receiver.receive({ headers: forged.headers, body: forged.body })).code).toBe('signature_mismatch');
    expect(seen).toEqual(['kyb.data_request.pending_approval', 'kyb.data_request.released']);
  });
});
