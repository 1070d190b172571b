/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type AgentQueryInput = {
  /** Continue this conversation (its history is sent to the model); absent: a new one. */
  conversationId?: string | number | null | undefined;
  filters?: QueryFilters | null | undefined;
  frequencyPenalty?: number | null | undefined;
  maxTokens?: number | null | undefined;
  modelName?: QueryModelName | null | undefined;
  presencePenalty?: number | null | undefined;
  /** @deprecated Use systemPrompt and userPrompt. */
  promptTemplate?: string | null | undefined;
  /** @deprecated Use systemPrompt and userPrompt. */
  promptType?: PromptType | null | undefined;
  query: string;
  /** REST only: answer as server-sent events. */
  streaming?: boolean | null | undefined;
  systemPrompt?: string | null | undefined;
  temperature?: number | null | undefined;
  /** Nucleus sampling, 0 to 1; change this or temperature, not both. */
  topP?: number | null | undefined;
  /** Placeholders: {query} and {context}. */
  userPrompt?: string | null | undefined;
  /** Absent: a new visitor id is made. */
  visitorId?: string | null | undefined;
};

export type AnswerEventType =
  | 'answer'
  | 'endpoint_response';

/** Every field is optional; given ones must all hold. */
export type ConversationFilter = {
  /** Only this agent's conversations. */
  agentId?: string | number | null | undefined;
  /** Started at or after this time. */
  from?: string | null | undefined;
  /** Started at or before this time. */
  to?: string | null | undefined;
  /** Only this visitor's (exact visitor id). */
  visitorId?: string | null | undefined;
};

export type LoginInput = {
  email: string;
  password: string;
};

export type MemberRole =
  | 'admin'
  | 'member'
  | 'owner';

export type MessageFrom =
  | 'agent'
  | 'human';

/** Model tiers; each maps to a configurable model id of the chat endpoint. */
export type ModelName =
  | 'model_3_5_turbo'
  | 'model_3_5_turbo_16k'
  | 'model_4'
  | 'model_4_32k';

/** Deprecated: use systemPrompt and userPrompt. */
export type PromptType =
  | 'customer_support'
  | 'raw';

export type QueryFilters = {
  /** Only fragments of datasources with these custom ids. */
  custom_ids?: Array<string> | null | undefined;
  /** Only fragments of these datasources. */
  datasource_ids?: Array<string> | null | undefined;
};

export type QueryModelName =
  | 'model_3_5_turbo'
  | 'model_3_5_turbo_16k'
  | 'model_4';

export type PublicAgentQueryVariables = Exact<{
  id: string | number;
}>;


export type PublicAgentQuery = { agent: { id: string, name: string, description: string } };

export type ChatStreamSubscriptionVariables = Exact<{
  id: string | number;
  input: AgentQueryInput;
}>;


export type ChatStreamSubscription = { agentQueryStream: { type: AnswerEventType, text: string | null, response: { conversationId: string, visitorId: string, messageId: string, sources: Array<{ source: string, datasource_id: string, datasource_name: string, page: number | null, score: number, text: string }> } | null } };

export type ChatHistoryQueryVariables = Exact<{
  id: string | number;
}>;


export type ChatHistoryQuery = { conversation: { id: string, visitorId: string, messages: { nodes: Array<{ id: string, from: MessageFrom, text: string, sources: Array<Record<string, unknown>> }> } } };

export type ConversationsQueryVariables = Exact<{
  filter?: ConversationFilter | null | undefined;
  after?: string | null | undefined;
}>;


export type ConversationsQuery = { conversations: { nodes: Array<{ id: string, agentId: string | null, formId: string | null, visitorId: string, channel: string, createdAt: string, updatedAt: string, messageCount: number }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type ConversationMessagesQueryVariables = Exact<{
  id: string | number;
}>;


export type ConversationMessagesQuery = { conversation: { id: string, agentId: string | null, visitorId: string, channel: string, createdAt: string, messages: { nodes: Array<{ id: string, from: MessageFrom, text: string, sources: Array<Record<string, unknown>>, metadata: Record<string, unknown>, createdAt: string }>, pageInfo: { hasNextPage: boolean } } } };

export type PlaygroundAgentsQueryVariables = Exact<{ [key: string]: never; }>;


export type PlaygroundAgentsQuery = { agents: { nodes: Array<{ id: string, name: string, handle: string | null, modelName: ModelName, temperature: number }> } };

export type LoginMutationVariables = Exact<{
  input: LoginInput;
}>;


export type LoginMutation = { login: { expiresAt: string } };

export type SessionQueryVariables = Exact<{ [key: string]: never; }>;


export type SessionQuery = { me: { via: string, role: MemberRole | null, user: { id: string, email: string } | null, organization: { id: string, name: string } } };

export type LogoutMutationVariables = Exact<{ [key: string]: never; }>;


export type LogoutMutation = { logout: boolean };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const PublicAgentDocument = new TypedDocumentString(`
    query PublicAgent($id: ID!) {
  agent(id: $id) {
    id
    name
    description
  }
}
    `) as unknown as TypedDocumentString<PublicAgentQuery, PublicAgentQueryVariables>;
export const ChatStreamDocument = new TypedDocumentString(`
    subscription ChatStream($id: ID!, $input: AgentQueryInput!) {
  agentQueryStream(id: $id, input: $input) {
    type
    text
    response {
      conversationId
      visitorId
      messageId
      sources {
        source
        datasource_id
        datasource_name
        page
        score
        text
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ChatStreamSubscription, ChatStreamSubscriptionVariables>;
export const ChatHistoryDocument = new TypedDocumentString(`
    query ChatHistory($id: ID!) {
  conversation(id: $id) {
    id
    visitorId
    messages(first: 100) {
      nodes {
        id
        from
        text
        sources
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ChatHistoryQuery, ChatHistoryQueryVariables>;
export const ConversationsDocument = new TypedDocumentString(`
    query Conversations($filter: ConversationFilter, $after: String) {
  conversations(filter: $filter, first: 20, after: $after) {
    nodes {
      id
      agentId
      formId
      visitorId
      channel
      createdAt
      updatedAt
      messageCount
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<ConversationsQuery, ConversationsQueryVariables>;
export const ConversationMessagesDocument = new TypedDocumentString(`
    query ConversationMessages($id: ID!) {
  conversation(id: $id) {
    id
    agentId
    visitorId
    channel
    createdAt
    messages(first: 100) {
      nodes {
        id
        from
        text
        sources
        metadata
        createdAt
      }
      pageInfo {
        hasNextPage
      }
    }
  }
}
    `) as unknown as TypedDocumentString<ConversationMessagesQuery, ConversationMessagesQueryVariables>;
export const PlaygroundAgentsDocument = new TypedDocumentString(`
    query PlaygroundAgents {
  agents(first: 100) {
    nodes {
      id
      name
      handle
      modelName
      temperature
    }
  }
}
    `) as unknown as TypedDocumentString<PlaygroundAgentsQuery, PlaygroundAgentsQueryVariables>;
export const LoginDocument = new TypedDocumentString(`
    mutation Login($input: LoginInput!) {
  login(input: $input) {
    expiresAt
  }
}
    `) as unknown as TypedDocumentString<LoginMutation, LoginMutationVariables>;
export const SessionDocument = new TypedDocumentString(`
    query Session {
  me {
    via
    role
    user {
      id
      email
    }
    organization {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<SessionQuery, SessionQueryVariables>;
export const LogoutDocument = new TypedDocumentString(`
    mutation Logout {
  logout
}
    `) as unknown as TypedDocumentString<LogoutMutation, LogoutMutationVariables>;