/**
 * An organization's templates (Postmark's `/templates` API) and what a send with a template renders:
 * `TemplatesService` runs each change through the template library decider and renders (Mustachio, then juice's
 * CSS inlining).
 */
export * from './service';
