export { buildApi, type BuildOptions } from './app';
export { type Api, type ApiDependencies } from './context';
export { connectApiDependencies } from './dependencies';
