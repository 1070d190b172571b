/**
 * What the protocol adapters (/v1, /mcp, /dify) share: how they are given the request context,
 * and how they write JSON. Each adapter only translates its protocol's shapes; rules, limits and
 * conversations stay in the services.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Drain } from '../http/drain.ts';
import type { Context } from '../graphql/context.ts';

export interface ProtocolOptions {
  /** The same per-request context as GraphQL and REST. Throws UNAUTHENTICATED for bad credentials. */
  context: (req: IncomingMessage) => Promise<Context>;
  bodyLimitBytes: number;
  onInternalError: (error: unknown, req: IncomingMessage) => void;
  /** Ends streams still open when a shutdown's grace is over (src/http/drain.ts). */
  drain?: Drain;
}

/** Answers the request when it is the adapter's, else returns false. */
export type ProtocolHandler = (req: IncomingMessage, res: ServerResponse, pathname: string) => boolean;

export { sendJson } from '../http/respond.ts';

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
