import type { PlotSpec } from '../plot.js';
import type { Sample } from './oom-sampler.js';
import type { Mode, ModeSpan } from './oom-stats.js';
import { stackedPanels } from './plots.js';
import type { TimelineEvent } from './record.js';

/** What the redis-oom plot shows. */
export interface OomPlotData {
  readonly samples: readonly Sample[];
  readonly spans: readonly ModeSpan[];
  /** Each dispatched job: due (s since the start), how late it went out, its partition's mode then. */
  readonly dispatches: readonly { s: number; lateMs: number; mode: Mode }[];
}

/** Redis's memory against its limit, each partition's mode, and dispatch lateness, on one time axis. */
export function oomPlot(marks: readonly TimelineEvent[], endS: number, d: OomPlotData): PlotSpec {
  const memory = d.samples.flatMap((x) => [
    { s: x.s, mb: x.usedMb, series: 'used_memory' },
    { s: x.s, mb: x.maxMb, series: 'maxmemory' },
  ]);
  const modeColor = {
    field: 'mode',
    type: 'nominal' as const,
    title: null,
    scale: { domain: ['hot', 'PostgreSQL-only'], range: ['#27ae60', '#e67e22'] },
    legend: { orient: 'top-left' as const },
  };
  return stackedPanels(
    'redis-oom: the drill’s Redis squeezed during a surge; each partition’s mode; dispatch lateness',
    [
      {
        height: 150,
        layers: [
          {
            data: { values: memory },
            mark: { type: 'line' },
            encoding: {
              x: { field: 's', type: 'quantitative' },
              y: { field: 'mb', type: 'quantitative', title: 'Redis MB', scale: { type: 'log' } },
              color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'top-left' } },
            },
          },
        ],
      },
      {
        height: 100,
        layers: [
          {
            data: { values: d.spans },
            mark: { type: 'bar', height: 10 },
            encoding: {
              x: { field: 'from', type: 'quantitative' },
              x2: { field: 'to' },
              y: { field: 'partition', type: 'ordinal', title: 'partition' },
              color: modeColor,
            },
          },
        ],
      },
      {
        height: 160,
        layers: [
          {
            data: { values: d.dispatches },
            mark: { type: 'point', filled: true, size: 10, opacity: 0.6 },
            encoding: {
              x: { field: 's', type: 'quantitative' },
              y: { field: 'lateMs', type: 'quantitative', title: 'dispatched after due (ms)' },
              color: modeColor,
            },
          },
        ],
      },
    ],
    marks,
    endS,
  );
}
