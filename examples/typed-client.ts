/**
 * A typed TypeScript client in a few lines: the operations below are typed by GraphQL Code
 * Generator from schema.graphql (`npm run codegen` writes examples/gql/), sent with `fetch`, and
 * the answer is streamed with the graphql-sse client. Copy this file and examples/gql/ into a
 * project (or point its own codegen.ts at the service's schema.graphql).
 *
 *   node --import @swc-node/register/esm-register examples/typed-client.ts http://localhost:4000 <api key> "What are your opening hours?"
 *
 * test/codegen.test.ts runs it against a real server, so it cannot fall behind the schema.
 */
import { fileURLToPath } from 'node:url';
import type { ResultOf, VariablesOf } from '@graphql-typed-document-node/core';
import { createClient } from 'graphql-sse';
import { graphql } from './gql/index.ts';
import type { TypedDocumentString } from './gql/graphql.ts';

const ListAgents = graphql(`
  query ListAgents($first: Int!) {
    agents(first: $first) {
      nodes {
        id
        name
        visibility
      }
    }
  }
`);

const AskAgent = graphql(`
  subscription AskAgent($id: ID!, $input: AgentQueryInput!) {
    agentQueryStream(id: $id, input: $input) {
      type
      text
      response {
        conversationId
        sources {
          source
          score
        }
      }
    }
  }
`);

/** One query or mutation over fetch: the result's type follows from the document. */
async function request<Result, Variables>(baseUrl: string, apiKey: string, document: TypedDocumentString<Result, Variables>, variables: Variables): Promise<Result> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const body = (await res.json()) as { data?: Result; errors?: { message: string; extensions?: { code?: string } }[] };
  if (body.errors?.length) throw new Error(body.errors.map((e) => `${e.extensions?.code}: ${e.message}`).join('; '));
  return body.data!;
}

export interface AskResult {
  agents: { id: string; name: string }[];
  answer: string;
  conversationId: string;
  sources: string[];
}

/** Lists the organization's agents and streams the first one's answer to `question`, text piece by piece to `onText`. */
export async function listAndAsk(baseUrl: string, apiKey: string, question: string, onText: (text: string) => void = () => {}): Promise<AskResult> {
  const { agents } = await request(baseUrl, apiKey, ListAgents, { first: 10 });
  const agent = agents.nodes[0];
  if (!agent) throw new Error('This organization has no agent yet.');

  const sse = createClient({ url: `${baseUrl}/graphql/stream`, headers: { authorization: `Bearer ${apiKey}` } });
  let answer = '';
  try {
    const events = sse.iterate<ResultOf<typeof AskAgent>>({ query: AskAgent.toString(), variables: { id: agent.id, input: { query: question } } satisfies VariablesOf<typeof AskAgent> });
    for await (const { data, errors } of events) {
      if (errors?.length) throw new Error(errors.map((e) => e.message).join('; '));
      const event = data!.agentQueryStream;
      if (event.type === 'answer') {
        answer += event.text ?? '';
        onText(event.text ?? '');
      } else if (event.response) {
        return { agents: agents.nodes, answer, conversationId: event.response.conversationId, sources: event.response.sources.map((s) => s.source) };
      }
    }
    throw new Error('The stream ended without its endpoint_response.');
  } finally {
    sse.dispose();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [baseUrl, apiKey, question = 'Hello!'] = process.argv.slice(2);
  if (!baseUrl || !apiKey) {
    console.error('usage: typed-client.ts <service URL> <API key> [question]');
    process.exit(2);
  }
  const result = await listAndAsk(baseUrl, apiKey, question, (text) => process.stdout.write(text));
  console.log(`\n\nconversation ${result.conversationId}; sources: ${result.sources.join(', ') || 'none'}`);
}
