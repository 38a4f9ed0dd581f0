export { apiRoutes, createApiServer, type ApiOptions, type ApiRoute } from './server.js';
export { keyView } from './key-routes.js';
export { CONSOLE_PREFIX, defaultConsoleDir } from './console-routes.js';
export type { WorkerGroupView } from './api-schemas.js';
