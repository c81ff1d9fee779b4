/** Mail that came back to our receiving server: the MailReceived event and its one-command decider. */
export * from './mailReceived';
