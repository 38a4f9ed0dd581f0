import type { PlotSpec } from '../plot.js';
import type { DrillContext } from './context.js';
import type { CriticalLate, Phase } from './herd-judge.js';
import { marked, withMarks } from './plots.js';

/** The legend's words for the phase a critical job fell due in. */
const PHASES: Record<Phase, string> = {
  unloaded: 'unloaded',
  release: 'a herd and batch being released',
  drain: 'the batch queued at the worker',
  quiet: 'between herds',
};

/** The two panels of midnight-herd, one above the other: both release curves, then critical lateness against the batch backlog. */
export function herdPlot(
  ctx: Pick<DrillContext, 'timeline'>,
  curves: readonly { s: number; n: number; run: string }[],
  lateness: readonly CriticalLate[],
  backlog: readonly { s: number; backlog: number }[],
  boundMs: number,
): PlotSpec {
  const top = withMarks(
    'midnight-herd: the herd’s release, dispatches per 100 ms',
    [
      {
        data: { values: curves },
        mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.2 },
        encoding: {
          x: { field: 's', type: 'quantitative' },
          y: { field: 'n', type: 'quantitative', title: 'dispatches per 100 ms', scale: { type: 'symlog' } },
          color: {
            field: 'run',
            type: 'nominal',
            title: null,
            legend: { orient: 'top-right', labelLimit: 300 },
          },
        },
      },
    ],
    [{ atMs: 0, event: '00:00' }],
    'seconds from the herd’s midnight',
  );
  const bottom = withMarks(
    'critical lateness (worker start − due) against the batch backlog',
    [
      {
        data: { values: backlog },
        mark: { type: 'area', color: '#bbb', opacity: 0.5, interpolate: 'step-after' },
        encoding: {
          x: { field: 's', type: 'quantitative' },
          y: {
            field: 'backlog',
            type: 'quantitative',
            title: 'batch jobs due, not finished',
            axis: { orient: 'right' },
          },
        },
      },
      {
        data: { values: lateness.map((l) => ({ ...l, phase: PHASES[l.phase], bound: boundMs })) },
        layer: [
          {
            mark: { type: 'point', filled: true, size: 12 },
            encoding: {
              x: { field: 's', type: 'quantitative' },
              y: { field: 'lateMs', type: 'quantitative', title: 'critical job started after due (ms)' },
              color: {
                field: 'phase',
                type: 'nominal',
                title: 'due while',
                scale: {
                  domain: Object.values(PHASES),
                  range: ['#2e8b57', '#d35400', '#1f5fa8', '#999999'],
                },
                legend: { orient: 'top', direction: 'horizontal', labelLimit: 300 },
              },
            },
          },
          {
            mark: { type: 'rule', color: '#1f5fa8', strokeDash: [2, 2] },
            encoding: { y: { field: 'bound', type: 'quantitative' } },
          },
        ],
      },
    ],
    marked(ctx.timeline, ['unloaded phase over', 'without jitter: 00:00', 'with jitter: 00:00']),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: 'white',
    vconcat: [panel(top), { ...panel(bottom), resolve: { scale: { y: 'independent' } } }],
    // Each panel its own colours: runs above, phases below.
    resolve: { scale: { color: 'independent' }, legend: { color: 'independent' } },
  } as unknown as PlotSpec;
}

/** A chart of withMarks() as one panel of a concatenation (no top-level-only properties). */
function panel(spec: PlotSpec): Record<string, unknown> {
  const rest = { ...(spec as unknown as Record<string, unknown>) };
  delete rest.$schema;
  delete rest.background;
  return rest;
}
