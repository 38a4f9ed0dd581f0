export { createApiServer, type ApiOptions } from './server.js';
export { keyView } from './key-routes.js';
