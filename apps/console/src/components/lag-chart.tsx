import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Overview } from '../api/types.js';

type Series = Overview['dispatch_lag'];

// Distinct hues that keep 3:1 contrast on white; the legend names every line too.
const COLOURS = ['#1d4ed8', '#b91c1c', '#047857', '#7c3aed', '#b45309', '#0e7490'];

/** Every class's p50 and p99 on one time axis (seconds), null where a minute had no dispatch. */
function chartData(series: Series): uPlot.AlignedData {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => Date.parse(p.at) / 1000)))].sort(
    (a, b) => a - b,
  );
  const columns = series.flatMap((s) => {
    const byTime = new Map(s.points.map((p) => [Date.parse(p.at) / 1000, p]));
    return [times.map((t) => byTime.get(t)?.p50_ms ?? null), times.map((t) => byTime.get(t)?.p99_ms ?? null)];
  });
  return [times, ...columns];
}

function options(series: Series, width: number, range: [number, number]): uPlot.Options {
  return {
    width,
    height: 260,
    // The whole period on the axis, whatever minutes had dispatches.
    scales: {
      x: { time: true, range: () => range },
      y: { range: (_u, _min, max) => [0, Math.max(10, max)] },
    },
    axes: [{}, { label: 'ms', size: 60 }],
    series: [
      {},
      ...series.flatMap((s, i) => {
        const stroke = COLOURS[i % COLOURS.length] ?? '#1d4ed8';
        return [
          { label: `${s.resource_class} p50`, stroke, width: 2, spanGaps: false },
          { label: `${s.resource_class} p99`, stroke, width: 2, dash: [6, 4], spanGaps: false },
        ];
      }),
    ],
  };
}

/**
 * Dispatch lag p50 (solid) and p99 (dashed) per class over time. The canvas is described for
 * screen readers and the same figures are in the table below it.
 */
export function LagChart({ series, from, to }: { series: Series; from: number; to: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || series.length === 0) return undefined;
    const plot = new uPlot(options(series, el.clientWidth || 600, [from, to]), chartData(series), el);
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [series, from, to]);
  if (series.every((s) => s.points.length === 0)) return <p>No job was dispatched in this period.</p>;
  return (
    <div
      ref={box}
      class="lag-chart"
      role="img"
      aria-label={`Dispatch lag p50 and p99 per minute for ${series.map((s) => s.resource_class).join(', ')}`}
    />
  );
}
