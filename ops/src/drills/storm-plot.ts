import type { PlotSpec } from '../plot.js';
import type { DownstreamCall } from './downstream.js';
import { stackedPanels } from './plots.js';
import type { TimelineEvent } from './record.js';
import { callsPerSecond, type BreakerState, type RetryScheduled } from './storm-stats.js';

/** What the retry-storm plot shows. */
export interface StormPlotData {
  readonly calls: readonly DownstreamCall[];
  readonly spans: readonly { from: number; to: number; state: BreakerState }[];
  readonly retries: readonly RetryScheduled[];
}

/** The downstream's answers per second under the breaker's states, and each retry's delay. */
export function stormPlot(marks: readonly TimelineEvent[], endS: number, d: StormPlotData): PlotSpec {
  const bands = {
    data: { values: d.spans },
    mark: { type: 'rect' as const, opacity: 0.18 },
    encoding: {
      x: { field: 'from', type: 'quantitative' as const },
      x2: { field: 'to' },
      color: {
        field: 'state',
        type: 'nominal' as const,
        title: 'breaker',
        scale: { domain: ['open', 'ramping'], range: ['#c0392b', '#e67e22'] },
        legend: { orient: 'top-right' as const },
      },
    },
  };
  return stackedPanels(
    'retry-storm: downstream answers per second under the worker’s breaker; retries’ delays',
    [
      {
        height: 220,
        layers: [
          bands,
          {
            data: { values: callsPerSecond(d.calls) },
            mark: { type: 'bar', width: 4 },
            encoding: {
              x: { field: 's', type: 'quantitative' },
              y: { field: 'n', type: 'quantitative', stack: true, title: 'downstream calls per second' },
              color: {
                field: 'status',
                type: 'nominal',
                title: 'answer',
                scale: { domain: ['200', '503'], range: ['#27ae60', '#8e44ad'] },
                legend: { orient: 'top-left' },
              },
            },
          },
        ],
      },
      {
        height: 160,
        layers: [
          {
            data: { values: d.retries.map((r) => ({ s: r.s, delayS: r.delayMs / 1000, failed: r.failed })) },
            mark: { type: 'point', filled: true, size: 14, opacity: 0.7 },
            encoding: {
              x: { field: 's', type: 'quantitative' },
              y: { field: 'delayS', type: 'quantitative', title: 'retry delay (s)' },
              color: {
                field: 'failed',
                type: 'ordinal',
                title: 'failed attempt',
                legend: { orient: 'top-left' },
              },
            },
          },
        ],
      },
    ],
    marks,
    endS,
  );
}
