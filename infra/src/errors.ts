/**
 * Errors of the infrastructure adapters. Each one says whether trying again can
 * help (`retriable`, required: there is no default, since for a mail sender a
 * blind retry of an unknown failure is a duplicate email) and keeps its cause.
 */
export class InfrastructureError extends Error {
  readonly retriable: boolean;
  readonly code: string;

  constructor(code: string, message: string, options: { retriable: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'InfrastructureError';
    this.code = code;
    this.retriable = options.retriable;
  }
}

/** Thrown by `retry` when every attempt failed; `cause` is the last failure. */
export class RetriesExhaustedError extends InfrastructureError {
  constructor(
    readonly attempts: number,
    cause: unknown,
  ) {
    super('RetriesExhausted', `gave up after ${attempts} attempts: ${describeCause(cause)}`, {
      retriable: false,
      cause,
    });
    this.name = 'RetriesExhaustedError';
  }
}

/** Whether an error declares itself retriable; `undefined` when it says nothing. */
export function declaredRetriable(error: unknown): boolean | undefined {
  if (error && typeof error === 'object' && 'retriable' in error && typeof error.retriable === 'boolean') {
    return error.retriable;
  }
  return undefined;
}

export function describeCause(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
