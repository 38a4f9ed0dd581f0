export { Tracker, type TrackerOptions } from './tracker.js';
