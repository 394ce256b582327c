/**
 * A column of a text table: its heading and how to read a row's cell.
 *
 * @example
 * ```ts
 * const column: Column<{ status: number }> = { heading: 'status', cell: (row) => String(row.status) }
 * ```
 */
export interface Column<Row> {
  heading: string;
  cell: (row: Row) => string;
}

/**
 * An aligned text table with a rule under the headings.
 *
 * @example
 * ```ts
 * formatTable([{ status: 200 }], [{ heading: 'status', cell: (row) => String(row.status) }])
 * // 'status\n------\n200'
 * ```
 */
export function formatTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  const cells = [
    columns.map((column) => column.heading),
    ...rows.map((row) => columns.map((column) => column.cell(row))),
  ];
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => line[index]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  return [line(cells[0]!), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/**
 * A progress line on stderr, rewritten in place, only when stderr is a terminal and the output is not JSON: scripts
 * and CI logs never see it.
 *
 * @example
 * ```ts
 * const progress = createProgress(steps.length, json)
 * progress.update('forged HMAC'); …; progress.done()
 * ```
 */
export interface Progress {
  update(label: string): void;
  done(): void;
}

/**
 * Creates a {@link Progress} for `total` steps.
 *
 * @example
 * ```ts
 * const progress = createProgress(3, options.json)
 * ```
 */
export function createProgress(total: number, json: boolean, stream: NodeJS.WriteStream = process.stderr): Progress {
  const active = !json && stream.isTTY === true && total > 1;
  let step = 0;
  return {
    update(label) {
      step += 1;
      if (active) stream.write(`\r\x1b[2K[${step}/${total}] ${label}…`);
    },
    done() {
      if (active) stream.write('\r\x1b[2K');
    },
  };
}

/**
 * Shortens a long value for a table cell.
 *
 * @example
 * ```ts
 * shorten('01JH4Z6V4M5Q8R2T7W9XKCNBDF', 12) // '01JH4Z6V4M5…'
 * ```
 */
export function shorten(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

/**
 * Writes one line to stdout.
 *
 * @example
 * ```ts
 * print(formatTable(rows, columns))
 * ```
 */
export function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/**
 * Writes a value as pretty JSON to stdout (`--json`).
 *
 * @example
 * ```ts
 * printJson({ ok: true, deliveries })
 * ```
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const EVENT_TYPE = /^kyb(?:\.[a-z0-9_]{1,40}){1,4}$/;

/**
 * An event_id from an unauthenticated body or header, as the output may show it: a ULID as it is, anything else as a
 * placeholder, so a capture cannot put text of its own (a token, terminal escapes) on the screen.
 *
 * @example
 * ```ts
 * shownEventId('01JH4Z6V4M5Q8R2T7W9XKCNBDF') // '01JH4Z6V4M5Q8R2T7W9XKCNBDF'
 * shownEventId('eyJhbGciOi…') // '(not an event id)'
 * ```
 */
export function shownEventId(value: unknown): string {
  return typeof value === 'string' && ULID.test(value) ? value : '(not an event id)';
}

/**
 * An event type from an unauthenticated body, as the output may show it: `kyb.`-style names only.
 *
 * @example
 * ```ts
 * shownEventType('kyb.data_request.released') // 'kyb.data_request.released'
 * shownEventType('\x1b[2J') // '(not an event type)'
 * ```
 */
export function shownEventType(value: unknown): string {
  return typeof value === 'string' && EVENT_TYPE.test(value) ? value : '(not an event type)';
}
