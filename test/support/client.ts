/** Small HTTP helpers: what a client of the service sends, nothing more. */
import { recordResponse } from './openapi-check.ts';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function http<T = any>(
  method: string,
  url: string,
  opts: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) {
    body = opts.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: the test sees the text */
  }
  // Checked against the OpenAPI document after the test file (test/setup.ts).
  if (/^application\/json\b/i.test(res.headers.get('content-type') ?? '') && parsed !== text) recordResponse({ method, url, status: res.status, body: parsed });
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export interface GqlResult<T = any> {
  status: number;
  data?: T;
  errors?: { message: string; path?: string[]; extensions: { code: string; details?: Record<string, unknown> } }[];
  headers: Headers;
}

export async function gql<T = any>(
  baseUrl: string,
  query: string,
  variables?: Record<string, unknown>,
  opts: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<GqlResult<T>> {
  const res = await http(`POST`, `${baseUrl}/graphql`, { token: opts.token, body: { query, variables }, headers: opts.headers });
  return { status: res.status, headers: res.headers, ...(res.body as object) };
}

let counter = 0;

/** Signs up a new organization; returns its owner's session token and a fresh API key. */
export async function newOrganization(baseUrl: string, name = 'Org') {
  const email = `owner${++counter}.${Date.now()}.${Math.random().toString(36).slice(2, 6)}@example.test`;
  const signUp = await gql(baseUrl, `mutation($input: SignUpInput!) { signUp(input: $input) { token organization { id } user { id } } }`, {
    input: { email, password: 'correct horse battery', organizationName: name },
  });
  if (!signUp.data) throw new Error(`signUp failed: ${JSON.stringify(signUp.errors)}`);
  const session: string = signUp.data.signUp.token;
  const key = await gql(baseUrl, `mutation { createApiKey(input: { name: "tests" }) { id key } }`, {}, { token: session });
  if (!key.data) throw new Error(`createApiKey failed: ${JSON.stringify(key.errors)}`);
  return {
    organizationId: signUp.data.signUp.organization.id as string,
    userId: signUp.data.signUp.user.id as string,
    email,
    session,
    apiKey: key.data.createApiKey.key as string,
  };
}
