/**
 * The command handler: decide → append → apply, the one path by which a command becomes events (handler.ts).
 */
export * from './handler';
