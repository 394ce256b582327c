import { describe, expect, it } from 'vitest';
import { createProgress, formatTable } from './output.js';

function fakeStream(isTTY: boolean) {
  const written: string[] = [];
  return { stream: { isTTY, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream, written };
}

describe('the progress line', () => {
  it('is written to a terminal, in place, and cleared at the end', () => {
    const { stream, written } = fakeStream(true);
    const progress = createProgress(2, false, stream);
    progress.update('forged HMAC');
    progress.update('the genuine delivery');
    progress.done();
    expect(written).toEqual(['\r\x1b[2K[1/2] forged HMAC…', '\r\x1b[2K[2/2] the genuine delivery…', '\r\x1b[2K']);
  });

  it.each([
    ['stderr is not a terminal', false, false],
    ['the output is JSON', true, true],
  ])('is not written when %s', (_case, isTTY, json) => {
    const { stream, written } = fakeStream(isTTY);
    const progress = createProgress(3, json, stream);
    progress.update('step');
    progress.done();
    expect(written).toEqual([]);
  });
});

describe('formatTable', () => {
  it('aligns columns under their headings with a rule', () => {
    const table = formatTable(
      [
        { step: 'seq 0', status: 200 },
        { step: 'seq 2 (seq 1 missing)', status: 409 },
      ],
      [
        { heading: 'step', cell: (row) => row.step },
        { heading: 'status', cell: (row) => String(row.status) },
      ],
    );
    expect(table.split('\n')).toEqual([
      'step                   status',
      '---------------------  ------',
      'seq 0                  200',
      'seq 2 (seq 1 missing)  409',
    ]);
  });
});
