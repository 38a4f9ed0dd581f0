export { withScripts, scriptSource, type KairosScripts, type ScriptName } from './scripts.js';
