/** Where a fresh consumer group starts: the event store's (every consumer of every app positions its groups so). */
export { positionNewGroup } from '@sendline/infra';
