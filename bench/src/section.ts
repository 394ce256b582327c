/**
 * What every bench section plugs into. `index.ts` runs the sections in order; a section measures, then returns its
 * report (tables and one verdict line per target) as text. A store section (bench/src/stores/, added later) is one
 * more `Section` in the list of `index.ts`.
 */
export interface BenchOptions {
  /** A short smoke run: fewer rounds and iterations, shorter HTTP runs. The figures are rough. */
  quick: boolean;
  /** `--framework`: the HTTP section measures these frameworks only (all of them when absent). */
  frameworks?: readonly import('./http/protocol.js').Framework[];
  /** `--insn-case`: the insn section measures these cases only (`<subject>` or `<subject>:<kind>`; all when absent). */
  insnCases?: readonly string[];
  /** `--insn-node`: the Node lines the insn section measures on (`this`, `22`, `24`, `26`; this and 26 when absent). */
  insnNodes?: readonly import('./insn/node-lines.js').NodeLineName[];
  /** Progress lines (stderr), so the report on stdout stays clean. */
  progress: (line: string) => void;
}

export interface Section {
  /** Used by `--only <name>`. */
  name: string;
  /** One line for the progress output. */
  title: string;
  run(options: BenchOptions): Promise<string>;
}
