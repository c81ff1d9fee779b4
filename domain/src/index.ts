export * from './domainError';
export * from './event';
export * from './decider';
export * from './messages';
export * from './suppressions';
export * from './validation';
export * from './accounts';
