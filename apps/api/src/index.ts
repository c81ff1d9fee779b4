export { buildApi, type Api, type ApiDependencies, type BuildOptions } from './app';
export { connectApiDependencies } from './dependencies';
