import { Type, type Static } from 'typebox';

/**
 * Every error answer: Postmark's `{ ErrorCode, Message }`. One schema for both its uses: the OpenAPI document
 * shows it (openapi.ts) and the error catalogue answers with its type (errors.ts). It has its own module because
 * openapi.ts already imports errors.ts.
 */
export const ErrorBody = Type.Object({ ErrorCode: Type.Integer(), Message: Type.String() });

export type PostmarkError = Static<typeof ErrorBody>;
