import type { PlotLayer, PlotSpec } from '../plot.js';
import type { TimelineEvent } from './record.js';

const X_TITLE = 'seconds since the drill started';

/** The marked moments as vertical rules, with their names stepped down one line each (labels). */
function markLayers(
  marks: readonly TimelineEvent[],
  xTitle: string,
  labels: boolean,
  endS?: number,
): PlotLayer[] {
  // Stepped labels keep moments close together readable.
  const rules = marks.map((m, i) => ({ s: m.atMs / 1000, event: m.event, py: 10 + 12 * i }));
  const rule: PlotLayer = {
    data: { values: rules },
    mark: { type: 'rule', strokeDash: [4, 3], color: '#c0392b' },
    encoding: {
      x: {
        field: 's',
        type: 'quantitative',
        title: xTitle,
        ...(endS === undefined ? {} : { scale: { domain: [0, endS], nice: false } }),
      },
    },
  };
  if (!labels) return [rule];
  return [
    rule,
    {
      data: { values: rules },
      mark: { type: 'text', align: 'left', dx: 3, dy: -4, angle: 0, color: '#c0392b', fontSize: 10 },
      encoding: {
        x: { field: 's', type: 'quantitative' },
        y: { field: 'py', type: 'quantitative', scale: null },
        text: { field: 'event' },
      },
    },
  ];
}

/** A drill's chart: its own layers under the marked moments of its timeline (vertical rules). */
export function withMarks(
  title: string,
  layers: readonly PlotLayer[],
  marks: readonly TimelineEvent[],
  xTitle = X_TITLE,
): PlotSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 640,
    height: 280,
    background: 'white',
    layer: [...layers, ...markLayers(marks, xTitle, true)],
  };
}

/** One panel of a stacked chart: its layers and height (px). */
export interface Panel {
  readonly layers: readonly PlotLayer[];
  readonly height: number;
}

/**
 * Panels one above the other on one time axis (seconds since the start, up to `endS`), each under
 * the marked moments; the first panel names them. For a drill with several things to show over time.
 */
export function stackedPanels(
  title: string,
  panels: readonly Panel[],
  marks: readonly TimelineEvent[],
  endS: number,
): PlotSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    background: 'white',
    resolve: { scale: { x: 'shared', color: 'independent' } },
    vconcat: panels.map((p, i) => ({
      width: 640,
      height: p.height,
      // A panel's layers may colour by different fields (a state band under counted bars).
      resolve: { scale: { color: 'independent' } },
      layer: [...p.layers, ...markLayers(marks, X_TITLE, i === 0, endS)],
    })),
  };
}

/** The events of a timeline with these names (the moments a chart marks). */
export const marked = (timeline: readonly TimelineEvent[], events: readonly string[]): TimelineEvent[] =>
  timeline.filter((e) => events.includes(e.event));
