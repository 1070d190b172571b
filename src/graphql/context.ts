import type { Response } from 'express';
import type { Auth } from '../auth/auth.ts';
import type { Em } from '../db/orm.ts';
import type { Services } from '../services.ts';

/** One per request, for GraphQL and REST alike: a forked EntityManager and the caller. */
export interface Context {
  readonly em: Em;
  auth: Auth;
  readonly services: Services;
  readonly ip: string;
  /** The request's `Origin` (a browser page's scheme://host[:port]); absent for servers and curl. */
  readonly origin?: string;
  /** Present on GraphQL over HTTP; used to set and clear the session cookie. */
  readonly res?: Response;
}
