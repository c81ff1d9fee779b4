/**
 * Mail out over SMTP, and the test server it is checked against. Sending: composing and DKIM-signing a message
 * (compose.ts and dkimSignature.ts, with the domains' signing keys from dkimKeys.ts), the mail servers of a recipient domain
 * (routing.ts), one SMTP transaction over pooled connections (transport.ts), what went wrong in our own terms
 * (errors.ts). Testing: the test mail server (testMailServer.ts), its per-address answers (addressAnswers.ts), the
 * bounces and complaints it sends back after a 250 (testReports.ts), its DKIM check (dkimCheck.ts) and the places it
 * finds DKIM public keys (dkimRecords.ts).
 */
export * from './errors';
export * from './compose';
export * from './dkimSignature';
export * from './dkimKeys';
export * from './dkimRecords';
export * from './routing';
export * from './transport';
export * from './addressAnswers';
export * from './dkimCheck';
export * from './testMailServer';
export * from './testReports';
