/**
 * The console's only way to the service: GraphQL over HTTP for queries and mutations, graphql-sse
 * for subscriptions, both same-origin with the session cookie. Operations are the typed strings
 * generated from schema.graphql (`npm run codegen` writes console/src/gql/), so a schema change
 * that breaks a page fails the typecheck.
 */
import { createClient, type Sink } from 'graphql-sse';
import type { TypedDocumentString } from './gql/graphql.ts';

/** A GraphQL error as the service reports it: the table code, and the field when it names one. */
export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** The input field the server blamed, for showing the message beside it. */
  get field(): string | undefined {
    const field = this.details?.field;
    return typeof field === 'string' ? field : undefined;
  }
}

interface GraphQLResponse<R> {
  data?: R | null;
  errors?: { message: string; extensions?: { code?: string; details?: Record<string, unknown> } }[];
}

function firstError(errors: NonNullable<GraphQLResponse<unknown>['errors']>): GraphQLRequestError {
  const [error] = errors;
  return new GraphQLRequestError(error?.message ?? 'The request failed.', error?.extensions?.code ?? 'INTERNAL', error?.extensions?.details);
}

/** Runs a query or mutation; rejects with GraphQLRequestError on the first error. */
export async function request<R, V>(document: TypedDocumentString<R, V>, ...[variables]: V extends Record<string, never> ? [] | [V] : [V]): Promise<R> {
  let response: Response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
    });
  } catch {
    throw new GraphQLRequestError('The service cannot be reached.', 'NETWORK');
  }
  const body = (await response.json().catch(() => null)) as GraphQLResponse<R> | null;
  if (body?.errors?.length) throw firstError(body.errors);
  if (!body?.data) throw new GraphQLRequestError(`The service answered ${response.status}.`, 'INTERNAL');
  return body.data;
}

const sse = createClient({ url: '/graphql/stream', credentials: 'same-origin', retryAttempts: 3 });

/** Subscribes (or streams a query's @defer-free result); returns the function that ends it. */
export function subscribe<R, V>(document: TypedDocumentString<R, V>, variables: V, sink: { next(data: R): void; error?(error: GraphQLRequestError): void; complete?(): void }): () => void {
  const inner: Sink<GraphQLResponse<R>> = {
    next: (result) => {
      if (result.errors?.length) sink.error?.(firstError(result.errors));
      else if (result.data) sink.next(result.data);
    },
    error: (err) => sink.error?.(err instanceof GraphQLRequestError ? err : new GraphQLRequestError(err instanceof Error ? err.message : 'The stream failed.', 'NETWORK')),
    complete: () => sink.complete?.(),
  };
  return sse.subscribe({ query: document.toString(), variables: variables as Record<string, unknown> }, inner as Sink);
}
