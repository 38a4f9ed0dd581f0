export { kairosEnv, intVar, runMain, onShutdown, EnvError, type KairosEnv } from './env.js';
