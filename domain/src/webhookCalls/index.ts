export * from './webhookCall';
export * from './decide';
