import type { StackConfig } from '../config.js';
import type { JarPaths } from '../jars.js';
import type { Toolchain } from '../prereqs.js';
import type { Spawned } from '../proc.js';

export type ServiceName =
  'postgres' | 'redis' | 'kafka' | 'connect' | 'registry' | 'prometheus' | 'redis-cluster' | 'kafka-cluster';

export interface StartContext {
  readonly cfg: StackConfig;
  readonly tools: Toolchain;
  readonly jars: JarPaths;
  readonly logFile: string;
  readonly pidFile: string;
}

export interface ServiceDef {
  readonly name: ServiceName;
  /** Services that must be healthy before this one starts. */
  readonly dependsOn: readonly ServiceName[];
  /** How long a cold start may take before `up` gives up. */
  readonly startTimeoutMs: number;
  listens(cfg: StackConfig): string;
  healthy(cfg: StackConfig): Promise<boolean>;
  start(ctx: StartContext): Spawned;
  /** Set-up that needs the service running (e.g. users), once `up` has started it and it answers. */
  ready?(ctx: Omit<StartContext, 'logFile' | 'pidFile'>): Promise<void>;
}
