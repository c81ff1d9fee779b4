export * from './types';
export * from './rows';
export * from './writer';
export * from './reader';
export * from './retention';
export * from './fingerprint';
