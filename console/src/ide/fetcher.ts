/**
 * How the GraphQL IDE reaches the service: queries and mutations over POST /graphql, subscriptions
 * over /graphql/stream (graphql-sse), both same-origin with the console's session cookie. Headers
 * typed into GraphiQL's header editor (an `Authorization: Bearer` API key, say) go along with both.
 */
import type { Fetcher, FetcherOpts, FetcherParams } from '@graphiql/toolkit';
import { getOperationAST, Kind, parse, type DocumentNode, type ExecutionResult } from 'graphql';
import { createClient } from 'graphql-sse';

/** GraphiQL's name for the query that loads the schema. */
const INTROSPECTION = 'IntrospectionQuery';

export const SCHEMA_UNAVAILABLE =
  'The schema is unavailable: this service answers no introspection (GRAPHQL_INTROSPECTION=false), so the IDE has no completion or documentation. Queries still run.';

/**
 * `onSchemaUnavailable` is told when the service refuses introspection, so the page can say so
 * beside the editor and not only in GraphiQL's response pane.
 */
export function createFetcher(opts: { onSchemaUnavailable(): void }): Fetcher {
  return (params, fetcherOpts) => {
    const headers = headersOf(fetcherOpts);
    const document = parsed(params.query);
    const request = document ? { ...params, operationName: operationNameIn(document, params.operationName) } : params;
    if (document && getOperationAST(document, request.operationName ?? undefined)?.operation === 'subscription') return subscribe(request, headers);
    return post(request, headers).then((result) => {
      if (params.operationName === INTROSPECTION && !result.data && result.errors?.length) {
        opts.onSchemaUnavailable();
        // `data: null` tells GraphiQL the refusal is final: it would otherwise ask a second time.
        return { data: null, errors: [{ message: SCHEMA_UNAVAILABLE }, ...result.errors] } as ExecutionResult;
      }
      return result;
    });
  };
}

function headersOf(opts: FetcherOpts | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(opts?.headers ?? {}).map(([name, value]) => [name, String(value)]));
}

/** Null for text that is no GraphQL: the service reports the syntax error better than we would. */
function parsed(query: string): DocumentNode | null {
  try {
    return parse(query);
  } catch {
    return null;
  }
}

/**
 * GraphiQL learns the operation's name a moment after the text changes: run at once after pasting
 * a new operation, it sends the old name, and the service answers "Unknown operation". With one
 * operation in the text, that operation is meant.
 */
function operationNameIn(document: DocumentNode, name: string | null | undefined): string | null | undefined {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (!name || operations.some((o) => o.name?.value === name)) return name;
  return operations.length === 1 ? (operations[0]!.name?.value ?? null) : name;
}

async function post(params: FetcherParams, headers: Record<string, string>): Promise<ExecutionResult> {
  const response = await fetch('/graphql', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(params),
  });
  const body = (await response.json().catch(() => null)) as ExecutionResult | null;
  if (!body) throw new Error(`The service answered ${response.status} ${response.statusText} without a GraphQL result.`);
  return body;
}

/** Each subscription gets its own graphql-sse client (distinct connections), ended with it. */
async function* subscribe(params: FetcherParams, headers: Record<string, string>): AsyncGenerator<ExecutionResult> {
  const client = createClient({ url: '/graphql/stream', credentials: 'same-origin', headers, retryAttempts: 0 });
  try {
    yield* client.iterate({ query: params.query, operationName: params.operationName ?? undefined, variables: params.variables ?? undefined });
  } finally {
    client.dispose();
  }
}
