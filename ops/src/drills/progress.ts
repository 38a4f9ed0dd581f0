import { SingleBar } from 'cli-progress';

/** The live progress of a drill: a bar of done/total with the current phase and elapsed time. */
export interface Progress {
  phase(text: string): void;
  update(value: number, total: number): void;
  stop(): void;
}

/**
 * The bar on a terminal (cli-progress, as `kairos dlq replay` follows a replay); elsewhere (a
 * log, CI) one plain line per phase, so the record of a run still reads in order.
 */
export function terminalProgress(drill: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  const t0 = Date.now();
  const secs = () => ((Date.now() - t0) / 1000).toFixed(0);
  if (!stream.isTTY) {
    return {
      phase: (text) => stream.write(`${drill} +${secs()}s ${text}\n`),
      update: () => undefined,
      stop: () => undefined,
    };
  }
  const bar = new SingleBar({
    format: `${drill} {bar} {value}/{total} | {secs}s | {phase}`,
    hideCursor: true,
    stream,
  });
  let phase = 'starting';
  bar.start(1, 0, { phase, secs: secs() });
  // The elapsed time moves on even while a phase waits.
  const tick = setInterval(() => bar.update({ secs: secs() }), 1000);
  return {
    phase: (text) => {
      phase = text;
      bar.update({ phase, secs: secs() });
    },
    update: (value, total) => {
      bar.setTotal(Math.max(1, total));
      bar.update(value, { phase, secs: secs() });
    },
    stop: () => {
      clearInterval(tick);
      bar.stop();
    },
  };
}

/** No output at all (tests). */
export const silentProgress: Progress = {
  phase: () => undefined,
  update: () => undefined,
  stop: () => undefined,
};
