// Keeps spec-coverage.md honest: every rule of the spec sections it covers has at least one test (or an explicit
// "not testable here" reason), ids are unique, and every mapped test title, and table case where one is named, still
// exists in its file. A renamed or deleted test therefore fails here instead of leaving a rule silently unguarded.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const COVERAGE_FILE = 'spec-coverage.md';
/** The spec sections covered (issue 11's, plus 4.2, 4.3 and 7 since the API client exists); each must have rules. */
const SECTIONS = ['2.3', '2.4', '2.5', '2.6', '2.7', '3', '4.2', '4.3', '5', '6', '7', '8', '9'];
const NOT_TESTABLE = 'not testable here: ';

interface TestRef {
  file: string;
  title: string;
  /** A row label of the `it.each` table the title belongs to. */
  testCase?: string;
  text: string;
}

interface Rule {
  id: string;
  section: string;
  rule: string;
  refs: TestRef[];
  reason?: string;
  line: number;
}

function parseCoverage(text: string): Rule[] {
  const rules: Rule[] = [];
  let section = '';
  text.split('\n').forEach((line, index) => {
    const heading = /^## (\d+(?:\.\d+)?)\.? /.exec(line);
    if (heading) section = heading[1]!;
    if (!/^\| S\d/.test(line)) return;
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(' | ')
      .map((cell) => cell.trim());
    if (cells.length !== 3)
      throw new Error(`${COVERAGE_FILE}:${index + 1}: expected 3 cells (id, rule, tests), got ${cells.length}`);
    const [id, rule, tests] = cells as [string, string, string];
    const entry: Rule = { id, section, rule, refs: [], line: index + 1 };
    if (tests.startsWith(NOT_TESTABLE)) entry.reason = tests.slice(NOT_TESTABLE.length).trim();
    else if (tests !== '') entry.refs = tests.split('<br>').map((ref) => parseRef(ref.trim(), index + 1));
    rules.push(entry);
  });
  return rules;
}

function parseRef(text: string, line: number): TestRef {
  const match = /^`([^`]+)` › (.+)$/.exec(text);
  if (!match) throw new Error(`${COVERAGE_FILE}:${line}: a test is written \`file\` › title [› case]; got "${text}"`);
  const [title, testCase] = match[2]!.split(' › ');
  return { file: match[1]!, title: title!, ...(testCase === undefined ? {} : { testCase }), text };
}

/** A string literal in TypeScript source: '…', "…" or `…` (a template's `${…}` stays as written). */
const LITERAL = String.raw`('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|\`(?:[^\`\\]|\\.)*\`)`;
/** The title argument of it/test/describe (also .each, .skip …, with type arguments) or of a call on a call: `it.each(rows)('title'`. */
const TITLE_CALL = new RegExp(
  String.raw`(?:\b(?:it|test|describe)(?:\.(?:each|skip|only|todo|concurrent|sequential|fails))*(?:<(?:[^<>]|<[^<>]*>)*>)?|\))\s*\(\s*` +
    LITERAL,
  'g',
);
const ANY_LITERAL = new RegExp(LITERAL, 'g');

function unquote(literal: string): string {
  const body = literal.slice(1, -1);
  return body.replace(/\\(.)/g, (_escape, char: string) => ({ n: '\n', t: '\t' })[char] ?? char);
}

interface Title {
  title: string;
  /** Where the source of the title's `it.each` table starts, when the title follows one. */
  tableStart: number | undefined;
  index: number;
}

const titleCache = new Map<string, { source: string; titles: Title[] }>();
function titlesOf(file: string): { source: string; titles: Title[] } {
  let cached = titleCache.get(file);
  if (!cached) {
    const source = readFileSync(join(root, file), 'utf8');
    const titles = [...source.matchAll(TITLE_CALL)].map((match) => {
      const eachAt = source.lastIndexOf('.each', match.index);
      const previousTitle = source.lastIndexOf('it(', match.index);
      return {
        title: unquote(match[1]!),
        tableStart: eachAt >= 0 && eachAt > previousTitle ? eachAt : undefined,
        index: match.index,
      };
    });
    cached = { source, titles };
    titleCache.set(file, cached);
  }
  return cached;
}

/** Whether `testCase` is a string literal inside the `it.each` table of one of the title's occurrences. */
function caseInTable(source: string, title: Title, testCase: string): boolean {
  if (title.tableStart === undefined) return false;
  const table = source.slice(title.tableStart, title.index);
  return [...table.matchAll(ANY_LITERAL)].some((match) => unquote(match[1]!) === testCase);
}

const coverageText = readFileSync(join(root, COVERAGE_FILE), 'utf8');
const rules = parseCoverage(coverageText);
const refs = rules.flatMap((rule) => rule.refs.map((ref) => [`${rule.id}: ${ref.text}`, ref] as const));

describe(`${COVERAGE_FILE}: every spec rule is guarded by a test`, () => {
  it('lists rules', () => {
    expect(rules.length).toBeGreaterThan(50);
  });

  it('gives every rule a unique id', () => {
    const ids = rules.map((rule) => rule.id);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it.each(SECTIONS)('has rules for spec section %s', (section) => {
    expect(rules.filter((rule) => rule.section === section).map((rule) => rule.id)).not.toEqual([]);
  });

  it.each(rules.map((rule) => [rule.id, rule] as const))(
    '%s has a test, or says why it cannot have one',
    (_id, rule) => {
      expect(rule.rule, `${COVERAGE_FILE}:${rule.line}: the rule text is empty`).not.toBe('');
      if (rule.reason !== undefined) {
        expect(
          rule.reason.length,
          `${COVERAGE_FILE}:${rule.line}: give the reason after "${NOT_TESTABLE}"`,
        ).toBeGreaterThan(20);
      } else {
        expect(
          rule.refs.length,
          `${COVERAGE_FILE}:${rule.line}: ${rule.id} has no test; map one or say "${NOT_TESTABLE}<reason>"`,
        ).toBeGreaterThan(0);
      }
    },
  );

  it('keeps the untestable rules few', () => {
    expect(rules.filter((rule) => rule.reason !== undefined).length).toBeLessThanOrEqual(Math.ceil(rules.length / 6));
  });

  it.each(refs)('%s exists', (_label, ref) => {
    expect(existsSync(join(root, ref.file)), `${ref.file} does not exist`).toBe(true);
    const { source, titles } = titlesOf(ref.file);
    const matches = titles.filter((title) => title.title === ref.title);
    expect(matches.length, `no test titled "${ref.title}" in ${ref.file}`).toBeGreaterThan(0);
    if (ref.testCase !== undefined) {
      expect(
        matches.some((title) => caseInTable(source, title, ref.testCase!)),
        `no case "${ref.testCase}" in the it.each table of "${ref.title}" in ${ref.file}`,
      ).toBe(true);
    }
  });
});

describe('the spec-coverage checker', () => {
  const source = [
    "it('plain title', () => {});",
    'it.each<[string, number]>([',
    "  ['first case', 1],",
    "  ['second case', 2],",
    "])('table title %s', (_case, n) => {});",
    "it('other title', () => {}); // 'stray case'",
    "describe(`described ${'x'}`, () => {});",
    "const notATest = 'looks like a title';",
  ].join('\n');
  const titles = [...source.matchAll(TITLE_CALL)].map((match) => {
    const eachAt = source.lastIndexOf('.each', match.index);
    const previousTitle = source.lastIndexOf('it(', match.index);
    return {
      title: unquote(match[1]!),
      tableStart: eachAt >= 0 && eachAt > previousTitle ? eachAt : undefined,
      index: match.index,
    };
  });

  it('finds the titles of it, it.each and describe calls, and no other string', () => {
    expect(titles.map((title) => title.title)).toEqual([
      'plain title',
      'table title %s',
      'other title',
      "described ${'x'}",
    ]);
  });

  it.each([
    ['first case', true],
    ['second case', true],
    ['stray case', false],
    ['third case', false],
  ])('finds the case "%s" in the table of its title: %s', (testCase, found) => {
    expect(caseInTable(source, titles[1]!, testCase)).toBe(found);
  });

  it('finds no table case for a title without a table', () => {
    expect(caseInTable(source, titles[2]!, 'first case')).toBe(false);
  });

  it('parses a rule line into its id, rule and tests', () => {
    const parsed = parseCoverage(
      [
        '## 5. Authentication',
        '| id | rule | tests |',
        '|---|---|---|',
        '| S5.1 | A rule. | `a.test.ts` › t1<br>`b.test.ts` › t2 › case |',
        '| S5.2 | Another. | not testable here: a reason long enough to read. |',
      ].join('\n'),
    );
    expect(parsed).toMatchObject([
      {
        id: 'S5.1',
        section: '5',
        refs: [
          { file: 'a.test.ts', title: 't1' },
          { file: 'b.test.ts', title: 't2', testCase: 'case' },
        ],
      },
      { id: 'S5.2', section: '5', refs: [], reason: 'a reason long enough to read.' },
    ]);
  });
});
