import type { DrillOption } from './drill.js';
import { DRILL_CLASSES } from './namespace.js';

/** Jobs of mixed classes falling due across `spreadS` seconds `leadMs` from now (seeded). */
export function spreadJobs(random: () => number, n: number, spreadS: number, leadMs = 2000) {
  const start = Date.now() + leadMs;
  return Array.from({ length: n }, (_, i) => ({
    tenant: 'drill',
    type: 'drill.effect',
    resource_class: DRILL_CLASSES[Math.floor(random() * DRILL_CLASSES.length)],
    payload: { i },
    due_at: new Date(start + Math.floor(random() * spreadS * 1000)).toISOString(),
  }));
}

/** The options of a drill whose jobs fall due across the run (spreadJobs). */
export function spreadOptions(jobs: number, minSpreadS: number): DrillOption[] {
  return [
    { name: 'jobs', description: 'jobs due across the run', default: jobs, min: 10, max: 50_000 },
    {
      name: 'spread',
      description: 'seconds over which they fall due',
      default: 40,
      min: minSpreadS,
      max: 600,
    },
  ];
}
