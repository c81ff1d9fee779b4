export * from './resolver';
export * from './zone';
export * from './server';
export * from './dev';
