import type { z } from 'zod';

/**
 * What PostgreSQL cannot store, found before it is asked to: it refuses the NUL character in
 * text and jsonb, jsonb refuses a lone UTF-16 surrogate (`\ud800` is not Unicode), and a JSON
 * value nested deep enough exhausts its parser's stack. Each would otherwise end a request as a 500.
 */

/** Deepest nesting of arrays and objects a payload may have. */
export const MAX_PAYLOAD_DEPTH = 64;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL could not store this string, or undefined when it can. */
export function unstorableText(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains the NUL character (\\u0000), which cannot be stored';
  if (LONE_SURROGATE.test(s)) return 'contains a lone UTF-16 surrogate: not valid Unicode';
  return undefined;
}

/** The first part of a JSON value that cannot be stored: its path (from `root`) and why. */
export function unstorableJson(value: unknown, root: string): { path: string; message: string } | undefined {
  // Iterative, so a value nested a million levels deep is refused, not a stack overflow here.
  const stack: [unknown, string, number][] = [[value, root, 0]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const why = unstorableText(v);
      if (why) return { path, message: why };
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_PAYLOAD_DEPTH) {
        return { path, message: `nested deeper than ${MAX_PAYLOAD_DEPTH} levels of arrays and objects` };
      }
      for (const [k, child] of Object.entries(v)) {
        const why = unstorableText(k);
        if (why) return { path: `${path}.${k}`, message: `key ${why}` };
        stack.push([child, `${path}.${k}`, depth + 1]);
      }
    }
  }
  return undefined;
}

/** A refinement: strings PostgreSQL cannot store are invalid input. */
export function storableText(value: string, ctx: z.RefinementCtx): void {
  const why = unstorableText(value);
  if (why) ctx.addIssue({ code: 'custom', message: why });
}

/** A refinement: payloads PostgreSQL cannot store (see unstorableJson) are invalid input. */
export function storableJson(value: unknown, ctx: z.RefinementCtx): void {
  const found = unstorableJson(value, '');
  if (found)
    ctx.addIssue({
      code: 'custom',
      message: found.path === '' ? found.message : `${found.path.slice(1)}: ${found.message}`,
    });
}
