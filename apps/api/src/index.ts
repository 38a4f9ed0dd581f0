export { createApiServer, type ApiOptions } from './server.js';
