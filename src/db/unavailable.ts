/**
 * Whether an error means the database cannot be reached (refused, reset, shutting down, or no
 * connection to be had in time), as opposed to a query that is wrong. The transports answer it
 * with 503 SERVICE_UNAVAILABLE: the client may try again; nothing about its request was at fault.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, crash). */
const SQLSTATE = /^(08|57P0[1-3])/;
const MESSAGES = /Connection terminated|connection (is )?closed|Client has encountered a connection error|timeout exceeded when trying to connect|Connection refused|the database system is (starting up|shutting down)|terminating connection/i;

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; originalError?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || SQLSTATE.test(e.code))) return true;
  if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
  // Wrapped by the ORM, by GraphQL, or gathered (AggregateError of a refused dual-stack connect).
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1) || isDatabaseUnavailable(e.originalError, depth + 1);
}
