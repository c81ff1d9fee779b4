export * from './errors';
export * from './compose';
export * from './dkimKeys';
export * from './dkimRecords';
export * from './routing';
export * from './transport';
export * from './testMailServer';
