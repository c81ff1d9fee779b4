export * from './settings';
export * from './messages';
