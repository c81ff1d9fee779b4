/**
 * The HTTP API (fastify). app.ts builds the app apart from listening (main.ts, workers.ts); context.ts is what the
 * routes share; routes/ maps requests to use cases (sending.ts for sends) and answers; errors.ts is the one error
 * catalogue (domain error → Postmark ErrorCode and HTTP status); auth.ts turns an API key into an organization and
 * its scopes; console/ is the web console's JSON endpoints (/console/api). No business rules here: they are the
 * domain's.
 */
export { buildApi, type BuildOptions } from './app';
export { type Api, type ApiDependencies, type ConsoleServices } from './context';
export { connectApiDependencies } from './dependencies';
