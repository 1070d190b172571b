/* eslint-disable */
import * as types from './graphql.ts';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query ListAgents($first: Int!) {\n    agents(first: $first) {\n      nodes {\n        id\n        name\n        visibility\n      }\n    }\n  }\n": typeof types.ListAgentsDocument,
    "\n  subscription AskAgent($id: ID!, $input: AgentQueryInput!) {\n    agentQueryStream(id: $id, input: $input) {\n      type\n      text\n      response {\n        conversationId\n        sources {\n          source\n          score\n        }\n      }\n    }\n  }\n": typeof types.AskAgentDocument,
};
const documents: Documents = {
    "\n  query ListAgents($first: Int!) {\n    agents(first: $first) {\n      nodes {\n        id\n        name\n        visibility\n      }\n    }\n  }\n": types.ListAgentsDocument,
    "\n  subscription AskAgent($id: ID!, $input: AgentQueryInput!) {\n    agentQueryStream(id: $id, input: $input) {\n      type\n      text\n      response {\n        conversationId\n        sources {\n          source\n          score\n        }\n      }\n    }\n  }\n": types.AskAgentDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ListAgents($first: Int!) {\n    agents(first: $first) {\n      nodes {\n        id\n        name\n        visibility\n      }\n    }\n  }\n"): typeof import('./graphql.ts').ListAgentsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription AskAgent($id: ID!, $input: AgentQueryInput!) {\n    agentQueryStream(id: $id, input: $input) {\n      type\n      text\n      response {\n        conversationId\n        sources {\n          source\n          score\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').AskAgentDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
