import { writeFileSync } from 'node:fs';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import * as vl from 'vega-lite';

export type PlotSpec = vl.TopLevelSpec;
/** One layer of a layered chart. */
export type PlotLayer = Extract<PlotSpec, { layer: unknown }>['layer'][number];

/** Renders a vega-lite spec to a PNG file (vega → SVG → resvg, twice the spec's size: crisp in READMEs). */
export async function writePlotPng(spec: PlotSpec, file: string): Promise<void> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    writeFileSync(file, new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 } }).render().asPng());
  } finally {
    view.finalize();
  }
}
