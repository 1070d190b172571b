import type { Request, Response } from 'express';
import type { Auth } from '../auth/auth.ts';
import type { Em } from '../db/orm.ts';
import type { Services } from '../services.ts';

/** One per request, for GraphQL and REST alike: a forked EntityManager and the caller. */
export interface Context {
  em: Em;
  auth: Auth;
  services: Services;
  ip: string;
  /** Present over HTTP; used to set and clear the session cookie. */
  res?: Response;
  req?: Request;
}
