/**
 * Templates: Postmark's template language (mustachio.ts: parse with positions, render within limits, the model a
 * template suggests) and an organization's templates and layouts with their versions (templates.ts: events, state,
 * the template library decider, what a send with a template renders).
 */
export * from './mustachio';
export * from './templates';
export * from './decider';
