/** Plain-text tables and verdict lines for the terminal. */

export type Align = 'left' | 'right';

export function table(
  title: string,
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  aligns?: readonly Align[],
): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const align = (column: number): Align => aligns?.[column] ?? (column === 0 ? 'left' : 'right');
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (align(column) === 'left' ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '─'.repeat(width)).join('  ');
  return [title, line(headers), rule, ...rows.map(line)].join('\n');
}

/** µs with precision that fits the magnitude. */
export function us(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value >= 1000) return Math.round(value).toLocaleString('en-US');
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '—';
}

export function int(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '—';
}

export function signedUs(value: number): string {
  if (!Number.isFinite(value)) return '—';
  return `${value >= 0 ? '+' : '−'}${us(Math.abs(value))}`;
}

export function bytes(value: number): string {
  return value >= 1024 ? `${(value / 1024).toFixed(value % 1024 === 0 ? 0 : 1)} KB` : `${value} B`;
}

/**
 * One verdict line: `met` / `missed`; `unsure` when the figure's confidence interval holds the target, so this
 * run cannot tell; `info` for figures without a target.
 */
export function verdict(outcome: boolean | 'unsure' | 'info' | 'skipped', text: string): string {
  const label =
    outcome === 'info'
      ? 'info  '
      : outcome === 'skipped'
        ? 'skipped'
        : outcome === 'unsure'
          ? 'unsure'
          : outcome
            ? 'met   '
            : 'MISSED';
  return `  ${label}  ${text}`;
}
