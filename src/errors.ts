import { GraphQLError } from 'graphql';

/**
 * The one table of expected errors. Both transports read it: REST answers with `status`
 * and `{ error: { code, message, details? } }`; GraphQL puts `code` in `extensions.code`.
 */
export const ERROR_CODES = {
  BAD_USER_INPUT: { status: 400, message: 'The request is not valid.' },
  UNAUTHENTICATED: { status: 401, message: 'Missing or invalid credentials.' },
  PAYMENT_REQUIRED: { status: 402, message: 'The usage limit of the organization is reached.' },
  FORBIDDEN: { status: 403, message: 'This operation is not allowed.' },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  CONFLICT: { status: 409, message: 'The request conflicts with existing data.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The content type is not supported.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; try again later.' },
  INTERNAL: { status: 500, message: 'Internal error.' },
  UPSTREAM_FAILED: { status: 502, message: 'A service this one depends on (the model endpoint) failed.' },
  SHUTTING_DOWN: { status: 503, message: 'The service is shutting down; send the request again.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The database cannot be reached; try again shortly.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export type ErrorDetails = Record<string, unknown>;

/** An expected failure: thrown by services, rendered by both transports from the table. */
export class AppError extends GraphQLError {
  readonly code: ErrorCode;
  readonly details?: ErrorDetails;

  constructor(code: ErrorCode, message?: string, details?: ErrorDetails, cause?: unknown) {
    super(message ?? ERROR_CODES[code].message, {
      extensions: { code, ...(details ? { details } : {}) },
      originalError: cause instanceof Error ? cause : undefined,
    });
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export const badInput = (message: string, details?: ErrorDetails) =>
  new AppError('BAD_USER_INPUT', message, details);
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found.`);
export const unauthenticated = (message?: string) => new AppError('UNAUTHENTICATED', message);
export const forbidden = (message?: string) => new AppError('FORBIDDEN', message);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
}

export function errorBody(code: ErrorCode, message: string, details?: ErrorDetails): ErrorBody {
  return { error: { code, message, ...(details ? { details } : {}) } };
}
