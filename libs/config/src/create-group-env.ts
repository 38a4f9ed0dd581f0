import { intVar } from './env.js';

/** Group commit of single creates, read by every app that creates jobs (the API and the ingest). */
export interface CreateGroupEnv {
  /** KAIROS_CREATE_GROUP_WAIT_MS, default 2: longest a create waits for others to share its transaction (0: off). */
  readonly maxWaitMs: number;
  /** KAIROS_CREATE_GROUP_MAX, default 100: most creates in one transaction. */
  readonly maxSize: number;
}

export function createGroupEnv(env: NodeJS.ProcessEnv = process.env): CreateGroupEnv {
  return {
    maxWaitMs: intVar(env, 'KAIROS_CREATE_GROUP_WAIT_MS', 2, 0, 1000),
    maxSize: intVar(env, 'KAIROS_CREATE_GROUP_MAX', 100, 1, 1000),
  };
}
