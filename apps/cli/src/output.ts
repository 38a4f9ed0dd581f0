import Table from 'cli-table3';

/** Prints rows as a table for people, or the whole answer as JSON for scripts. */
export interface Out {
  readonly json: boolean;
  /** The answer as JSON (--json), else nothing. */
  data(value: unknown): boolean;
  table(rows: readonly Record<string, unknown>[], columns: readonly string[]): void;
  line(text: string): void;
}

const cell = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v.length > 60 ? `${v.slice(0, 57)}…` : v;
  if (typeof v === 'object') return JSON.stringify(v);
  return typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : '';
};

export function output(json: boolean): Out {
  return {
    json,
    data(value) {
      if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      return json;
    },
    table(rows, columns) {
      const t = new Table({ head: [...columns], style: { head: [], border: [] } });
      for (const r of rows) t.push(columns.map((c) => cell(r[c])));
      process.stdout.write(`${t.toString()}\n`);
    },
    line(text) {
      process.stdout.write(`${text}\n`);
    },
  };
}

/** A single record as a two-column table (field, value). */
export function record(out: Out, value: Record<string, unknown>): void {
  out.table(
    Object.entries(value).map(([field, v]) => ({ field, value: v })),
    ['field', 'value'],
  );
}
