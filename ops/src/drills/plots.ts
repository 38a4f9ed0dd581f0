import type { PlotLayer, PlotSpec } from '../plot.js';
import type { TimelineEvent } from './record.js';

/** A drill's chart: its own layers under the marked moments of its timeline (vertical rules). */
export function withMarks(
  title: string,
  layers: readonly PlotLayer[],
  marks: readonly TimelineEvent[],
  xTitle = 'seconds since the drill started',
): PlotSpec {
  // Labels stepped down one line each, so moments close together stay readable.
  const rules = marks.map((m, i) => ({ s: m.atMs / 1000, event: m.event, py: 10 + 12 * i }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 640,
    height: 280,
    background: 'white',
    layer: [
      ...layers,
      {
        data: { values: rules },
        mark: { type: 'rule', strokeDash: [4, 3], color: '#c0392b' },
        encoding: { x: { field: 's', type: 'quantitative', title: xTitle } },
      },
      {
        data: { values: rules },
        mark: { type: 'text', align: 'left', dx: 3, dy: -4, angle: 0, color: '#c0392b', fontSize: 10 },
        encoding: {
          x: { field: 's', type: 'quantitative' },
          y: { field: 'py', type: 'quantitative', scale: null },
          text: { field: 'event' },
        },
      },
    ],
  };
}

/** The events of a timeline with these names (the moments a chart marks). */
export const marked = (timeline: readonly TimelineEvent[], events: readonly string[]): TimelineEvent[] =>
  timeline.filter((e) => events.includes(e.event));
