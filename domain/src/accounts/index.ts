export * from './rules';
export * from './organization';
export * from './commands';
export * from './decider';
export * from './apiKeys';
export * from './dns';
export * from './allowance';
