import type { ErrorCode, ErrorCodeOf } from './error-codes.ts';

/** One failing input, named by JSON pointer (RFC 6901) inside its location. */
export interface FieldError {
  location: 'body' | 'path' | 'query' | 'header';
  pointer: string;
  message: string;
}

/**
 * An error the client caused or may act on. It carries its HTTP status so that the mapping to a
 * response lives in one place (the HTTP error middleware); anything else becomes a generic 500.
 * Its code is one of error-codes.ts; the helpers below take only the codes of their own status.
 */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly errors: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** An answer lists at most this many field errors; `errorCount` says how many there were. */
export const maxListedErrors = 100;

/** `count` and its noun, singular for one: `1 item`, `2 items`, `1,000 groups`. */
export const counted = (count: number, noun: string, plural = `${noun}s`): string =>
  `${count.toLocaleString('en')} ${count === 1 ? noun : plural}`;

/** Words whose first letter is a vowel but whose first sound is not (`a user`, `a unique`, `a URL`, `a one`). */
const consonantSounding = /^(?:us|uni|ur|ut|eu|one)/i;

/** A word with its indefinite article, by its first sound: `an agent`, `a tenant`, `a user`. */
export const withArticle = (word: string): string =>
  `${/^[aeiou]/i.test(word) && !consonantSounding.test(word) ? 'an' : 'a'} ${word}`;
/**
 * The longest message or pointer an answer repeats: both can quote a key of the body, which may be
 * as long as the body. With the count above, an error answer stays under 200 KB, far from Lambda's
 * 6 MB response limit, whatever was sent (a 1 MB body of 120k unknown keys once got a 7.8 MB 400).
 */
export const maxEchoedLength = 500;

/** Cut to `maxEchoedLength`, never between the halves of a surrogate pair. */
const bounded = (text: string) =>
  text.length > maxEchoedLength ? `${text.slice(0, maxEchoedLength - 1).replace(/[\uD800-\uDBFF]$/, '')}…` : text;

/**
 * The error envelope every error answer carries (DESIGN.md section 6), built here for every route,
 * so no route can answer more than `maxListedErrors` errors of bounded length.
 */
export const errorBody = (code: ErrorCode, message: string, requestId: string, errors: readonly FieldError[] = []) => ({
  status: 'error',
  success: false,
  message: bounded(message),
  code,
  errors: errors
    .slice(0, maxListedErrors)
    .map((error) => ({ ...error, pointer: bounded(error.pointer), message: bounded(error.message) })),
  errorCount: errors.length,
  requestId,
});

/** The generic answer to anything unexpected: details go to the logs only, under the same request id. */
export const internalErrorBody = (requestId: string) => errorBody('internal_error', 'Internal server error', requestId);

export const badRequest = (message: string, errors: FieldError[], code: ErrorCodeOf<400>) =>
  new ServiceError(400, code, message, errors);

export const unauthorized = (message: string, challenge = 'Bearer') =>
  new ServiceError(401, 'unauthorized', message, [], { 'www-authenticate': challenge });

export const forbidden = (message: string, code: ErrorCodeOf<403>) => new ServiceError(403, code, message);

export const notFound = (message: string, code: ErrorCodeOf<404>) => new ServiceError(404, code, message);

export const conflict = (
  message: string,
  code: ErrorCodeOf<409>,
  errors: FieldError[] = [],
  headers: Record<string, string> = {},
) => new ServiceError(409, code, message, errors, headers);

export const preconditionFailed = (message: string, code: ErrorCodeOf<412>, errors: FieldError[] = []) =>
  new ServiceError(412, code, message, errors);

export const payloadTooLarge = (message: string) => new ServiceError(413, 'payload_too_large', message);

export const unsupportedMediaType = (message: string) => new ServiceError(415, 'unsupported_media_type', message);

/**
 * A later attempt of the same idempotent request (same Idempotency-Key) took over from this one,
 * which outlived its deadline: that attempt's answer is the one that counts.
 */
export const supersededAttempt = () =>
  conflict('A retry of this request took it over; its answer is the one that counts', 'idempotency_key_in_progress');
