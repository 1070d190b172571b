/**
 * The documented REST paths (interface.md), each one row: the GraphQL operation it runs, how
 * the request maps to its variables, and how the result is shaped back into the documented
 * JSON. No access rule and no validation lives here: the resolvers and the schema decide.
 */

export interface RestRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body, or undefined when there was none. */
  body: unknown;
}

export interface RestRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path relative to the REST base path; `:name` segments become params. */
  path: string;
  /** The interface.md endpoint this row implements. */
  endpoint: string;
  /** A GraphQL document with exactly one operation. */
  document: string;
  variables: (req: RestRequest) => Record<string, unknown>;
  /** Picks the documented JSON out of `data`. */
  result: (data: Record<string, unknown>) => unknown;
}

/** The Agent record of interface.md endpoint 11, plus handle and timestamps. */
const AGENT_RECORD = `id handle name description modelName temperature visibility systemPrompt userPrompt promptType promptTemplate createdAt updatedAt`;

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/agents/:id',
    endpoint: '10. Get agent',
    document: `query GetAgent($id: ID!) { agent(id: $id) { id handle name description visibility } }`,
    variables: (req) => ({ id: req.params.id }),
    result: (data) => data.agent,
  },
  {
    method: 'PATCH',
    path: '/agents/:id',
    endpoint: '11. Update agent',
    document: `mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) { updateAgent(id: $id, input: $input) { ${AGENT_RECORD} } }`,
    variables: (req) => ({ id: req.params.id, input: req.body }),
    result: (data) => data.updateAgent,
  },
  {
    method: 'DELETE',
    path: '/agents/:id',
    endpoint: '12. Delete agent',
    // The documented empty JSON body carries nothing.
    document: `mutation DeleteAgent($id: ID!) { deleteAgent(id: $id) { ${AGENT_RECORD} } }`,
    variables: (req) => ({ id: req.params.id }),
    result: (data) => data.deleteAgent,
  },
];
