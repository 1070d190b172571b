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
    "\n  query PublicAgent($id: ID!) {\n    agent(id: $id) { id name description }\n  }\n": typeof types.PublicAgentDocument,
    "\n  subscription ChatStream($id: ID!, $input: AgentQueryInput!) {\n    agentQueryStream(id: $id, input: $input) {\n      type\n      text\n      response {\n        conversationId\n        visitorId\n        messageId\n        sources { source datasource_id datasource_name page score text }\n      }\n    }\n  }\n": typeof types.ChatStreamDocument,
    "\n  query ChatHistory($id: ID!) {\n    conversation(id: $id) {\n      id\n      visitorId\n      messages(first: 100) { nodes { id from text sources } }\n    }\n  }\n": typeof types.ChatHistoryDocument,
    "\n  query Conversations($filter: ConversationFilter, $after: String) {\n    conversations(filter: $filter, first: 20, after: $after) {\n      nodes { id agentId formId visitorId channel createdAt updatedAt messageCount }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": typeof types.ConversationsDocument,
    "\n  query ConversationMessages($id: ID!) {\n    conversation(id: $id) {\n      id agentId visitorId channel createdAt\n      messages(first: 100) { nodes { id from text sources metadata createdAt } pageInfo { hasNextPage } }\n    }\n  }\n": typeof types.ConversationMessagesDocument,
    "\n  query PlaygroundAgents {\n    agents(first: 100) { nodes { id name handle modelName temperature } }\n  }\n": typeof types.PlaygroundAgentsDocument,
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      expiresAt\n    }\n  }\n": typeof types.LoginDocument,
    "\n  query Session {\n    me {\n      via\n      role\n      user { id email }\n      organization { id name }\n    }\n  }\n": typeof types.SessionDocument,
    "\n  mutation Logout {\n    logout\n  }\n": typeof types.LogoutDocument,
};
const documents: Documents = {
    "\n  query PublicAgent($id: ID!) {\n    agent(id: $id) { id name description }\n  }\n": types.PublicAgentDocument,
    "\n  subscription ChatStream($id: ID!, $input: AgentQueryInput!) {\n    agentQueryStream(id: $id, input: $input) {\n      type\n      text\n      response {\n        conversationId\n        visitorId\n        messageId\n        sources { source datasource_id datasource_name page score text }\n      }\n    }\n  }\n": types.ChatStreamDocument,
    "\n  query ChatHistory($id: ID!) {\n    conversation(id: $id) {\n      id\n      visitorId\n      messages(first: 100) { nodes { id from text sources } }\n    }\n  }\n": types.ChatHistoryDocument,
    "\n  query Conversations($filter: ConversationFilter, $after: String) {\n    conversations(filter: $filter, first: 20, after: $after) {\n      nodes { id agentId formId visitorId channel createdAt updatedAt messageCount }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": types.ConversationsDocument,
    "\n  query ConversationMessages($id: ID!) {\n    conversation(id: $id) {\n      id agentId visitorId channel createdAt\n      messages(first: 100) { nodes { id from text sources metadata createdAt } pageInfo { hasNextPage } }\n    }\n  }\n": types.ConversationMessagesDocument,
    "\n  query PlaygroundAgents {\n    agents(first: 100) { nodes { id name handle modelName temperature } }\n  }\n": types.PlaygroundAgentsDocument,
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      expiresAt\n    }\n  }\n": types.LoginDocument,
    "\n  query Session {\n    me {\n      via\n      role\n      user { id email }\n      organization { id name }\n    }\n  }\n": types.SessionDocument,
    "\n  mutation Logout {\n    logout\n  }\n": types.LogoutDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PublicAgent($id: ID!) {\n    agent(id: $id) { id name description }\n  }\n"): typeof import('./graphql.ts').PublicAgentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ChatStream($id: ID!, $input: AgentQueryInput!) {\n    agentQueryStream(id: $id, input: $input) {\n      type\n      text\n      response {\n        conversationId\n        visitorId\n        messageId\n        sources { source datasource_id datasource_name page score text }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').ChatStreamDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ChatHistory($id: ID!) {\n    conversation(id: $id) {\n      id\n      visitorId\n      messages(first: 100) { nodes { id from text sources } }\n    }\n  }\n"): typeof import('./graphql.ts').ChatHistoryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Conversations($filter: ConversationFilter, $after: String) {\n    conversations(filter: $filter, first: 20, after: $after) {\n      nodes { id agentId formId visitorId channel createdAt updatedAt messageCount }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n"): typeof import('./graphql.ts').ConversationsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConversationMessages($id: ID!) {\n    conversation(id: $id) {\n      id agentId visitorId channel createdAt\n      messages(first: 100) { nodes { id from text sources metadata createdAt } pageInfo { hasNextPage } }\n    }\n  }\n"): typeof import('./graphql.ts').ConversationMessagesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PlaygroundAgents {\n    agents(first: 100) { nodes { id name handle modelName temperature } }\n  }\n"): typeof import('./graphql.ts').PlaygroundAgentsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      expiresAt\n    }\n  }\n"): typeof import('./graphql.ts').LoginDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Session {\n    me {\n      via\n      role\n      user { id email }\n      organization { id name }\n    }\n  }\n"): typeof import('./graphql.ts').SessionDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Logout {\n    logout\n  }\n"): typeof import('./graphql.ts').LogoutDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
