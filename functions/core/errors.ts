/** One failing input, named by JSON pointer (RFC 6901) inside its location. */
export interface FieldError {
  location: 'body' | 'path' | 'query' | 'header';
  pointer: string;
  message: string;
}

/**
 * An error the client caused or may act on. It carries its HTTP status so that the mapping to a
 * response lives in one place (the HTTP error middleware); anything else becomes a generic 500.
 */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** The error envelope every error answer carries (DESIGN.md section 6). */
export const errorBody = (code: string, message: string, requestId: string, errors: FieldError[] = []) => ({
  status: 'error',
  success: false,
  message,
  code,
  errors,
  requestId,
});

/** The generic answer to anything unexpected: details go to the logs only, under the same request id. */
export const internalErrorBody = (requestId: string) => errorBody('internal_error', 'Internal server error', requestId);

export const badRequest = (message: string, errors: FieldError[] = [], code = 'invalid_request') =>
  new ServiceError(400, code, message, errors);

export const unauthorized = (message: string, challenge = 'Bearer') =>
  new ServiceError(401, 'unauthorized', message, [], { 'www-authenticate': challenge });

export const notFound = (message: string) => new ServiceError(404, 'not_found', message);

export const conflict = (message: string, code = 'conflict', errors: FieldError[] = []) =>
  new ServiceError(409, code, message, errors);

export const payloadTooLarge = (message: string) => new ServiceError(413, 'payload_too_large', message);

export const unsupportedMediaType = (message: string) => new ServiceError(415, 'unsupported_media_type', message);
