/**
 * SMTP: compose a message's MIME and sign it with DKIM (compose.ts, dkimKeys.ts, dkimRecords.ts), find the
 * recipients' mail servers (routing.ts), deliver (transport.ts, errors.ts with the SMTP response code), and the
 * mail server the tests and `npm start` deliver to (testMailServer.ts).
 */
export * from './errors';
export * from './compose';
export * from './dkimKeys';
export * from './dkimRecords';
export * from './routing';
export * from './transport';
export * from './testMailServer';
