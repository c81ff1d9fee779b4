export * from './handler';
