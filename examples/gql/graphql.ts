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

export type Visibility =
  | 'private'
  | 'public';

export type ListAgentsQueryVariables = Exact<{
  first: number;
}>;


export type ListAgentsQuery = { agents: { nodes: Array<{ id: string, name: string, visibility: Visibility }> } };

export type AskAgentSubscriptionVariables = Exact<{
  id: string | number;
  input: AgentQueryInput;
}>;


export type AskAgentSubscription = { agentQueryStream: { type: AnswerEventType, text: string | null, response: { conversationId: string, sources: Array<{ source: string, score: number }> } | null } };

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

export const ListAgentsDocument = new TypedDocumentString(`
    query ListAgents($first: Int!) {
  agents(first: $first) {
    nodes {
      id
      name
      visibility
    }
  }
}
    `) as unknown as TypedDocumentString<ListAgentsQuery, ListAgentsQueryVariables>;
export const AskAgentDocument = new TypedDocumentString(`
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
    `) as unknown as TypedDocumentString<AskAgentSubscription, AskAgentSubscriptionVariables>;