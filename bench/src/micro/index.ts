/** Section A: signature check, attestation check, receive() and schema validation in-process, on 1 KB and 64 KB bodies. */
import type { TestSigner } from '@kyb-webhooks/testing';
import { createBenchSigner, padEnvelope, benchEvent } from '../fixtures.js';
import { measure, type HarnessOptions, type Measurement } from '../harness.js';
import { bytes, int, ratio, table, us, verdict } from '../report.js';
import type { BenchOptions, Section } from '../section.js';
import { ATTESTATION_NAMES, attestationCandidates } from './attestation.js';
import { fullMemoryStore, MEMORY_STORE_CAP, receiveCandidate } from './receive.js';
import { checkCandidates, SIGNATURE_NAMES, signatureCandidates } from './signature.js';
import { VALIDATION_NAMES, validationCandidates } from './validation.js';

const BODY_SIZES = [1024, 64 * 1024] as const;
const TARGET_SIGNATURE_RATIO = 1.2;
const TARGET_ATTESTATION_RATIO = 1.5;

function harnessOptions(quick: boolean): HarnessOptions {
  return quick ? { rounds: 3, roundMs: 8, warmupMs: 30 } : { rounds: 9, roundMs: 40, warmupMs: 250 };
}

const find = (results: readonly Measurement[], name: string): Measurement => {
  const found = results.find((result) => result.name === name);
  if (!found) throw new Error(`no measurement named ${name}`);
  return found;
};

/** Rows of one group: µs/op and the ratio to the group's first row. */
function groupRows(heading: string, results: readonly Measurement[], labels?: readonly string[]): string[][] {
  const first = results[0]!.medianUs;
  return [
    [heading, '', '', ''],
    ...results.map((result, i) => [
      `  ${labels?.[i] ?? result.name}`,
      us(result.medianUs),
      ratio(result.medianUs / first),
      int(result.iterations),
    ]),
  ];
}

async function bodySizeTable(
  signer: TestSigner,
  size: number,
  options: HarnessOptions,
  bench: BenchOptions,
): Promise<{ text: string; verdicts: string[] }> {
  bench.progress(`micro ${bytes(size)}: HMAC check + parse`);
  const delivery = await signer.sign(padEnvelope(benchEvent('hmac'), size));
  const body = Buffer.from(delivery.body.buffer, delivery.body.byteOffset, delivery.body.byteLength);
  const version = signer.currentVersion;
  const signature = signatureCandidates({
    body,
    secret: signer.secrets[version]!,
    version,
    header: delivery.headers['service-kyb-signature']!,
  });
  await checkCandidates(signature);
  const signatureResults = await measure(signature, options);

  bench.progress(`micro ${bytes(size)}: receive() end to end (signing the pools)`);
  const receive = [
    await receiveCandidate('HMAC-only pending_approval', signer, 'hmac', size, options),
    await receiveCandidate('attested released', signer, 'attested', size, options),
  ];
  const receiveLabels = receive.map((candidate) => `${candidate.name}, ${int(candidate.bodyBytes)} B`);
  if (size === BODY_SIZES[0]) {
    bench.progress(`micro ${bytes(size)}: filling a memory store to its cap`);
    const full = await receiveCandidate(
      'HMAC-only, memory store at its cap',
      signer,
      'hmac',
      size,
      options,
      await fullMemoryStore(),
    );
    receive.push(full);
    receiveLabels.push(`HMAC-only, memory store at its ${int(MEMORY_STORE_CAP)}-entry cap (info)`);
  }
  const receiveResults = await measure(receive, options);
  bench.progress(`micro ${bytes(size)}: envelope + data validation`);
  const validationResults = size === BODY_SIZES[0] ? await measure(await validationCandidates(signer), options) : [];

  const text = table(
    `Micro · ${bytes(size)} body (${int(size)} B) · median of ${options.rounds} interleaved rounds`,
    ['candidate', 'µs/op', 'ratio', 'ops/round'],
    [
      ...groupRows('A1 HMAC header check + JSON parse (ratio to the baseline)', signatureResults),
      ...groupRows(
        'A3 receiver.receive(), memory store, no-op handler, µs per event (ratio to the first row)',
        receiveResults,
        receiveLabels,
      ),
      ...(validationResults.length > 0
        ? groupRows('A4 envelope + event data validation, one pending_approval event (ratio to zod)', validationResults)
        : []),
    ],
  );

  const baseline = find(signatureResults, SIGNATURE_NAMES.baseline).medianUs;
  const ours = find(signatureResults, SIGNATURE_NAMES.ours).medianUs;
  const stripe = find(signatureResults, SIGNATURE_NAMES.stripe).medianUs;
  const web = find(signatureResults, SIGNATURE_NAMES.web).medianUs;
  const label = `A1 ${bytes(size)}`;
  const verdicts = [
    verdict(
      ours / baseline <= TARGET_SIGNATURE_RATIO,
      `${label}: ours ${us(ours)} µs = ${ratio(ours / baseline)} the node:crypto baseline (${us(baseline)} µs); target ≤ ${ratio(TARGET_SIGNATURE_RATIO)}`,
    ),
    verdict(
      ours < stripe,
      `${label}: ours ${us(ours)} µs vs stripe constructEvent ${us(stripe)} µs (${ratio(ours / stripe)}); target: faster than stripe`,
    ),
    verdict('info', `${label}: Web Crypto path ${us(web)} µs = ${ratio(web / ours)} the node:crypto path`),
  ];
  if (validationResults.length > 0) {
    const zod = find(validationResults, VALIDATION_NAMES.zod).medianUs;
    const guard = find(validationResults, VALIDATION_NAMES.guard).medianUs;
    verdicts.push(
      verdict('info', `A4: schema guard ${us(guard)} µs vs zod safeParse ${us(zod)} µs (${ratio(guard / zod)})`),
    );
  }
  return { text, verdicts };
}

async function attestationTable(
  signer: TestSigner,
  options: HarnessOptions,
  bench: BenchOptions,
): Promise<{ text: string; verdicts: string[] }> {
  bench.progress('micro: attestation check');
  const { candidates, tokenBytes } = await attestationCandidates(signer);
  await checkCandidates(candidates);
  const results = await measure(candidates, options);
  const text = table(
    `Micro · attestation, RS256 2048-bit token of ${int(tokenBytes)} B · median of ${options.rounds} interleaved rounds`,
    ['candidate', 'µs/op', 'ratio', 'ops/round'],
    groupRows('A2 attestation check (ratio to the baseline)', results),
  );
  const baseline = find(results, ATTESTATION_NAMES.baseline).medianUs;
  const ours = find(results, ATTESTATION_NAMES.ours).medianUs;
  const jose = find(results, ATTESTATION_NAMES.jose).medianUs;
  const web = find(results, ATTESTATION_NAMES.web).medianUs;
  const verdicts = [
    verdict(
      ours / baseline <= TARGET_ATTESTATION_RATIO,
      `A2: ours ${us(ours)} µs = ${ratio(ours / baseline)} raw crypto.verify (${us(baseline)} µs); target ≤ ${ratio(TARGET_ATTESTATION_RATIO)}`,
    ),
    verdict(
      'info',
      `A2: plain jose jwtVerify ${us(jose)} µs (${ratio(jose / ours)} ours); ours on Web Crypto ${us(web)} µs (${ratio(web / ours)} ours)`,
    ),
  ];
  return { text, verdicts };
}

export const microSection: Section = {
  name: 'micro',
  title: 'A. micro benchmarks (in-process)',
  async run(bench: BenchOptions): Promise<string> {
    const options = harnessOptions(bench.quick);
    const signer = await createBenchSigner();
    const parts: string[] = [];
    const verdicts: string[] = [];
    for (const size of BODY_SIZES) {
      const { text, verdicts: found } = await bodySizeTable(signer, size, options, bench);
      parts.push(text);
      verdicts.push(...found);
    }
    const attestation = await attestationTable(signer, options, bench);
    parts.push(attestation.text);
    verdicts.push(...attestation.verdicts);
    return [...parts, ['Verdicts (micro)', ...verdicts].join('\n')].join('\n\n');
  },
};
