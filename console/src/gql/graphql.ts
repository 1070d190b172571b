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

export type CreateAgentInput = {
  /** Origins (scheme://host[:port], at most 50) whose web pages may call it; empty or null = any origin. */
  allowedOrigins?: Array<string> | null | undefined;
  /** Datastores of the same organization the agent answers from. */
  datastoreIds?: Array<string | number> | null | undefined;
  description?: string | null | undefined;
  /** 3 to 40 of a-z, 0-9, "_" and "-"; a leading "@" is accepted. */
  handle?: string | null | undefined;
  modelName?: ModelName | null | undefined;
  name: string;
  /** @deprecated Use systemPrompt and userPrompt. */
  promptTemplate?: string | null | undefined;
  /** @deprecated Use systemPrompt and userPrompt. */
  promptType?: PromptType | null | undefined;
  systemPrompt?: string | null | undefined;
  temperature?: number | null | undefined;
  userPrompt?: string | null | undefined;
  visibility?: Visibility | null | undefined;
};

/** A key limited to some agents or datastores, read-only or expiring; every limit is optional (see docs/keys.md). */
export type CreateApiKeyInput = {
  /** Agents of the organization the key is limited to (at most 100); omitted: all of them, including later ones. */
  agentIds?: Array<string | number> | null | undefined;
  /** Datastores of the organization the key is limited to (at most 100); omitted: all of them, including later ones. */
  datastoreIds?: Array<string | number> | null | undefined;
  /** Must lie in the future; after it the key is refused (401). Omitted: never expires. */
  expiresAt?: string | null | undefined;
  name: string;
  /** Queries, reads and conversations only. Default false. */
  readOnly?: boolean | null | undefined;
};

/** A web page, a web site or a raw text document. Files go through createUploadLink or the REST upload paths. */
export type CreateDatasourceInput = {
  /** web_page: {source_url}; web_site: {sitemap} or {source_url}. */
  config?: Record<string, unknown> | null | undefined;
  /** Your own id, for filtering queries (multi-tenant set-ups). */
  customId?: string | null | undefined;
  datastoreId: string | number;
  metadata?: Record<string, unknown> | null | undefined;
  name?: string | null | undefined;
  /** web_page and web_site: none (default), daily, weekly or a five-field cron expression (UTC) to fetch it again on. */
  resyncSchedule?: string | null | undefined;
  /** The text of a `text` document. */
  text?: string | null | undefined;
  type: DatasourceType;
};

export type CreateDatastoreInput = {
  /** Origins (scheme://host[:port], at most 50) whose web pages may call it; empty or null = any origin. */
  allowedOrigins?: Array<string> | null | undefined;
  /** Characters shared by neighbouring chunks, 0 to 4,000 (default 200). */
  chunkOverlap?: number | null | undefined;
  /** Characters per chunk, 100 to 8,000 (default 1,000). */
  chunkSize?: number | null | undefined;
  description?: string | null | undefined;
  name: string;
  /** When to fetch all its web_page and web_site datasources again: none (default), daily, weekly or a five-field cron expression (UTC). */
  resyncSchedule?: string | null | undefined;
  visibility?: Visibility | null | undefined;
};

export type CreateFormInput = {
  intro?: string | null | undefined;
  name: string;
  /** Default false: the chat answers 404 until the form is published. */
  published?: boolean | null | undefined;
  /** JSON Schema draft 2020-12: type object, properties (one question each), required. */
  schema: Record<string, unknown>;
  /** http(s) address that receives completed submissions. */
  webhookUrl?: string | null | undefined;
};

export type DatasourceStatus =
  | 'error'
  | 'pending'
  | 'running'
  | 'synched'
  | 'unsynched'
  | 'usage_limit_reached';

/** file, web_page and web_site as in the REST interface; text for raw text documents. */
export type DatasourceType =
  | 'file'
  | 'text'
  | 'web_page'
  | 'web_site';

export type DatastoreQueryInput = {
  filters?: QueryFilters | null | undefined;
  /** Only fragments scoring at least this (0 to 1; see QueryResult.score). */
  minScore?: number | null | undefined;
  query: string;
  /** 1 to 100; default 5. */
  topK?: number | null | undefined;
};

export type FormChatInput = {
  /** Continue this conversation of the form; absent: a new one. */
  conversationId?: string | number | null | undefined;
  /** The visitor's message. */
  query: string;
  /** REST only: answer as server-sent events. */
  streaming?: boolean | null | undefined;
  /** Absent: a new visitor id is made. */
  visitorId?: string | null | undefined;
};

export type FormSubmissionStatus =
  | 'completed'
  | 'in_progress';

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

export type SignUpInput = {
  email: string;
  organizationName: string;
  password: string;
};

export type UpdateAgentInput = {
  /** Replaces the allowed origins when given (scheme://host[:port], at most 50); [] = any origin. */
  allowedOrigins?: Array<string> | null | undefined;
  /** Replaces the linked datastores when given. */
  datastoreIds?: Array<string | number> | null | undefined;
  description: string;
  /** Set to null to remove the handle. */
  handle?: string | null | undefined;
  modelName?: ModelName | null | undefined;
  name?: string | null | undefined;
  /** @deprecated Use systemPrompt and userPrompt. */
  promptTemplate?: string | null | undefined;
  /** @deprecated Use systemPrompt and userPrompt. */
  promptType?: PromptType | null | undefined;
  systemPrompt?: string | null | undefined;
  temperature?: number | null | undefined;
  userPrompt?: string | null | undefined;
  visibility?: Visibility | null | undefined;
};

export type UpdateDatastoreInput = {
  /** Replaces the allowed origins when given (scheme://host[:port], at most 50); [] = any origin. */
  allowedOrigins?: Array<string> | null | undefined;
  /** Characters shared by neighbouring chunks, 0 to 4,000 (default 200). */
  chunkOverlap?: number | null | undefined;
  /** Characters per chunk, 100 to 8,000 (default 1,000). */
  chunkSize?: number | null | undefined;
  description?: string | null | undefined;
  /** Changes the embedding model: `local` (the shipped model) or a model name of the configured embeddings endpoint. Every chunk is re-embedded in the background (pendingEmbeddingModel, reembedProgress); queries use the old vectors until all are done. The model in use cancels a change under way. */
  embeddingModel?: string | null | undefined;
  name?: string | null | undefined;
  /** none, daily, weekly or a five-field cron expression (UTC) for all its web datasources. */
  resyncSchedule?: string | null | undefined;
  visibility?: Visibility | null | undefined;
};

export type UpdateFormInput = {
  intro?: string | null | undefined;
  name?: string | null | undefined;
  published?: boolean | null | undefined;
  schema?: Record<string, unknown> | null | undefined;
  webhookUrl?: string | null | undefined;
};

export type Visibility =
  | 'private'
  | 'public';

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

export type UsageSummaryQueryVariables = Exact<{ [key: string]: never; }>;


export type UsageSummaryQuery = { me: { organization: { monthlyQueryLimit: number, storedTokenLimit: number, usage: { queriesThisMonth: number, storedTokens: number } | null } } };

export type AgentPageQueryVariables = Exact<{
  id: string | number;
}>;


export type AgentPageQuery = { agent: { id: string, name: string, description: string, handle: string | null, modelName: ModelName, temperature: number, visibility: Visibility, systemPrompt: string, userPrompt: string, allowedOrigins: Array<string>, datastoreIds: Array<string>, createdAt: string, updatedAt: string } };

export type AgentDatastoreChoicesQueryVariables = Exact<{
  after?: string | null | undefined;
}>;


export type AgentDatastoreChoicesQuery = { datastores: { nodes: Array<{ id: string, name: string, visibility: Visibility }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type UpdateAgentMutationVariables = Exact<{
  id: string | number;
  input: UpdateAgentInput;
}>;


export type UpdateAgentMutation = { updateAgent: { id: string, name: string, description: string, handle: string | null, modelName: ModelName, temperature: number, visibility: Visibility, systemPrompt: string, userPrompt: string, allowedOrigins: Array<string>, datastoreIds: Array<string>, createdAt: string, updatedAt: string } };

export type DeleteAgentMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteAgentMutation = { deleteAgent: { id: string } };

export type AgentListQueryVariables = Exact<{
  after?: string | null | undefined;
}>;


export type AgentListQuery = { agents: { nodes: Array<{ id: string, name: string, handle: string | null, visibility: Visibility, modelName: ModelName }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type CreateAgentMutationVariables = Exact<{
  input: CreateAgentInput;
}>;


export type CreateAgentMutation = { createAgent: { id: string } };

export type ConversationsQueryVariables = Exact<{
  filter?: ConversationFilter | null | undefined;
  after?: string | null | undefined;
}>;


export type ConversationsQuery = { conversations: { nodes: Array<{ id: string, agentId: string | null, formId: string | null, visitorId: string, channel: string, createdAt: string, updatedAt: string, messageCount: number }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type ConversationMessagesQueryVariables = Exact<{
  id: string | number;
}>;


export type ConversationMessagesQuery = { conversation: { id: string, agentId: string | null, visitorId: string, channel: string, createdAt: string, messages: { nodes: Array<{ id: string, from: MessageFrom, text: string, sources: Array<Record<string, unknown>>, metadata: Record<string, unknown>, createdAt: string }>, pageInfo: { hasNextPage: boolean } } } };

export type DatasourcePageQueryVariables = Exact<{
  id: string | number;
}>;


export type DatasourcePageQuery = { datasource: { id: string, name: string, type: DatasourceType, status: DatasourceStatus, chunkCount: number, tokenCount: number, size: number | null, errorMessage: string | null, datastoreId: string, fileName: string | null, mimeType: string | null, config: Record<string, unknown>, updatedAt: string } };

export type ChunksPageQueryVariables = Exact<{
  id: string | number;
  first: number;
  after?: string | null | undefined;
}>;


export type ChunksPageQuery = { chunks: { nodes: Array<{ id: string, position: number, page: number | null, tokenCount: number, section: string | null, text: string }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type DatasourceRowFragment = { id: string, name: string, type: DatasourceType, status: DatasourceStatus, chunkCount: number, size: number | null, errorMessage: string | null, updatedAt: string };

export type DatastorePageQueryVariables = Exact<{
  id: string | number;
}>;


export type DatastorePageQuery = { datastore: { id: string, name: string, description: string, visibility: Visibility, uploadPath: string, embeddingModel: string, chunkSize: number, chunkOverlap: number, createdAt: string }, datasources: { nodes: Array<{ id: string, name: string, type: DatasourceType, status: DatasourceStatus, chunkCount: number, size: number | null, errorMessage: string | null, updatedAt: string }>, pageInfo: { hasNextPage: boolean } }, me: { organization: { crawlPageLimit: number } } };

export type DatasourceRowQueryVariables = Exact<{
  id: string | number;
}>;


export type DatasourceRowQuery = { datasource: { id: string, name: string, type: DatasourceType, status: DatasourceStatus, chunkCount: number, size: number | null, errorMessage: string | null, updatedAt: string } };

export type DatasourceStatusChangedSubscriptionVariables = Exact<{
  datastoreId: string | number;
}>;


export type DatasourceStatusChangedSubscription = { datasourceStatusChanged: { id: string, name: string, type: DatasourceType, status: DatasourceStatus, chunkCount: number, errorMessage: string | null, at: string } };

export type UpdateDatastoreMutationVariables = Exact<{
  id: string | number;
  input: UpdateDatastoreInput;
}>;


export type UpdateDatastoreMutation = { updateDatastore: { id: string, name: string, description: string, visibility: Visibility } };

export type DeleteDatastoreMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteDatastoreMutation = { deleteDatastore: { id: string } };

export type CreateDatasourceMutationVariables = Exact<{
  input: CreateDatasourceInput;
}>;


export type CreateDatasourceMutation = { createDatasource: { id: string, name: string, type: DatasourceType, status: DatasourceStatus, chunkCount: number, size: number | null, errorMessage: string | null, updatedAt: string } };

export type ResyncDatasourceMutationVariables = Exact<{
  id: string | number;
}>;


export type ResyncDatasourceMutation = { resyncDatasource: { id: string, name: string, type: DatasourceType, status: DatasourceStatus, chunkCount: number, size: number | null, errorMessage: string | null, updatedAt: string } };

export type DeleteDatasourceMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteDatasourceMutation = { deleteDatasource: { id: string } };

export type SearchDatastoreQueryVariables = Exact<{
  id: string | number;
  input: DatastoreQueryInput;
}>;


export type SearchDatastoreQuery = { datastoreQuery: Array<{ datasource_id: string, datasource_name: string, source: string, page: number | null, score: number, text: string }> };

export type DatastoresQueryVariables = Exact<{
  after?: string | null | undefined;
}>;


export type DatastoresQuery = { datastores: { nodes: Array<{ id: string, name: string, description: string, visibility: Visibility, createdAt: string, updatedAt: string }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type CreateDatastoreMutationVariables = Exact<{
  input: CreateDatastoreInput;
}>;


export type CreateDatastoreMutation = { createDatastore: { id: string } };

export type FormPageQueryVariables = Exact<{
  id: string | number;
}>;


export type FormPageQuery = { form: { id: string, name: string, intro: string, published: boolean, schema: Record<string, unknown>, webhookUrl: string | null, createdAt: string, updatedAt: string } };

export type FormSubmissionsQueryVariables = Exact<{
  formId: string | number;
}>;


export type FormSubmissionsQuery = { formSubmissions: { nodes: Array<{ id: string, status: FormSubmissionStatus, values: Record<string, unknown>, skipped: Array<string>, currentField: string | null, createdAt: string, completedAt: string | null, webhookError: string | null }>, pageInfo: { hasNextPage: boolean } } };

export type UpdateFormMutationVariables = Exact<{
  id: string | number;
  input: UpdateFormInput;
}>;


export type UpdateFormMutation = { updateForm: { id: string, name: string, intro: string, published: boolean, schema: Record<string, unknown>, webhookUrl: string | null, createdAt: string, updatedAt: string } };

export type DeleteFormMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteFormMutation = { deleteForm: { id: string } };

export type FormChatMutationVariables = Exact<{
  formId: string | number;
  input: FormChatInput;
}>;


export type FormChatMutation = { formChat: { answer: string, conversationId: string, visitorId: string, currentField: string | null, isValid: boolean, status: FormSubmissionStatus, values: Record<string, unknown> } };

export type FormsQueryVariables = Exact<{
  after?: string | null | undefined;
}>;


export type FormsQuery = { forms: { nodes: Array<{ id: string, name: string, published: boolean, updatedAt: string }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type CreateFormMutationVariables = Exact<{
  input: CreateFormInput;
}>;


export type CreateFormMutation = { createForm: { webhookSecret: string, form: { id: string } } };

export type ApiKeysQueryVariables = Exact<{ [key: string]: never; }>;


export type ApiKeysQuery = { apiKeys: Array<{ id: string, name: string, prefix: string, createdAt: string, lastUsedAt: string | null, expiresAt: string | null, revokedAt: string | null, readOnly: boolean, agentIds: Array<string> | null, datastoreIds: Array<string> | null }> };

export type KeyScopeChoicesQueryVariables = Exact<{
  agentsAfter?: string | null | undefined;
  datastoresAfter?: string | null | undefined;
  agents: boolean;
  datastores: boolean;
}>;


export type KeyScopeChoicesQuery = { agents?: { nodes: Array<{ id: string, name: string }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } }, datastores?: { nodes: Array<{ id: string, name: string }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type CreateApiKeyMutationVariables = Exact<{
  input: CreateApiKeyInput;
}>;


export type CreateApiKeyMutation = { createApiKey: { id: string, key: string } };

export type RevokeApiKeyMutationVariables = Exact<{
  id: string | number;
}>;


export type RevokeApiKeyMutation = { revokeApiKey: { id: string, revokedAt: string | null } };

export type OrganizationPageQueryVariables = Exact<{ [key: string]: never; }>;


export type OrganizationPageQuery = { me: { role: MemberRole | null, organization: { id: string, name: string, monthlyQueryLimit: number, storedTokenLimit: number, crawlPageLimit: number, usage: { period: string, queriesThisMonth: number, storedTokens: number } | null } } };

export type MembersQueryVariables = Exact<{
  after?: string | null | undefined;
}>;


export type MembersQuery = { members: { nodes: Array<{ id: string, email: string, role: MemberRole, joinedAt: string }>, pageInfo: { endCursor: string | null, hasNextPage: boolean } } };

export type RenameOrganizationMutationVariables = Exact<{
  name: string;
}>;


export type RenameOrganizationMutation = { updateOrganization: { id: string, name: string } };

export type PlaygroundAgentsQueryVariables = Exact<{ [key: string]: never; }>;


export type PlaygroundAgentsQuery = { agents: { nodes: Array<{ id: string, name: string, handle: string | null, modelName: ModelName, temperature: number }> } };

export type LoginMutationVariables = Exact<{
  input: LoginInput;
}>;


export type LoginMutation = { login: { expiresAt: string } };

export type SignUpMutationVariables = Exact<{
  input: SignUpInput;
}>;


export type SignUpMutation = { signUp: { expiresAt: string } };

export type ServiceInfoQueryVariables = Exact<{ [key: string]: never; }>;


export type ServiceInfoQuery = { serviceInfo: { signupEnabled: boolean } };

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
export const DatasourceRowFragmentDoc = new TypedDocumentString(`
    fragment DatasourceRow on Datasource {
  id
  name
  type
  status
  chunkCount
  size
  errorMessage
  updatedAt
}
    `, {"fragmentName":"DatasourceRow"}) as unknown as TypedDocumentString<DatasourceRowFragment, unknown>;
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
export const UsageSummaryDocument = new TypedDocumentString(`
    query UsageSummary {
  me {
    organization {
      monthlyQueryLimit
      storedTokenLimit
      usage {
        queriesThisMonth
        storedTokens
      }
    }
  }
}
    `) as unknown as TypedDocumentString<UsageSummaryQuery, UsageSummaryQueryVariables>;
export const AgentPageDocument = new TypedDocumentString(`
    query AgentPage($id: ID!) {
  agent(id: $id) {
    id
    name
    description
    handle
    modelName
    temperature
    visibility
    systemPrompt
    userPrompt
    allowedOrigins
    datastoreIds
    createdAt
    updatedAt
  }
}
    `) as unknown as TypedDocumentString<AgentPageQuery, AgentPageQueryVariables>;
export const AgentDatastoreChoicesDocument = new TypedDocumentString(`
    query AgentDatastoreChoices($after: String) {
  datastores(first: 100, after: $after) {
    nodes {
      id
      name
      visibility
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<AgentDatastoreChoicesQuery, AgentDatastoreChoicesQueryVariables>;
export const UpdateAgentDocument = new TypedDocumentString(`
    mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) {
  updateAgent(id: $id, input: $input) {
    id
    name
    description
    handle
    modelName
    temperature
    visibility
    systemPrompt
    userPrompt
    allowedOrigins
    datastoreIds
    createdAt
    updatedAt
  }
}
    `) as unknown as TypedDocumentString<UpdateAgentMutation, UpdateAgentMutationVariables>;
export const DeleteAgentDocument = new TypedDocumentString(`
    mutation DeleteAgent($id: ID!) {
  deleteAgent(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteAgentMutation, DeleteAgentMutationVariables>;
export const AgentListDocument = new TypedDocumentString(`
    query AgentList($after: String) {
  agents(first: 50, after: $after) {
    nodes {
      id
      name
      handle
      visibility
      modelName
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<AgentListQuery, AgentListQueryVariables>;
export const CreateAgentDocument = new TypedDocumentString(`
    mutation CreateAgent($input: CreateAgentInput!) {
  createAgent(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreateAgentMutation, CreateAgentMutationVariables>;
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
export const DatasourcePageDocument = new TypedDocumentString(`
    query DatasourcePage($id: ID!) {
  datasource(id: $id) {
    id
    name
    type
    status
    chunkCount
    tokenCount
    size
    errorMessage
    datastoreId
    fileName
    mimeType
    config
    updatedAt
  }
}
    `) as unknown as TypedDocumentString<DatasourcePageQuery, DatasourcePageQueryVariables>;
export const ChunksPageDocument = new TypedDocumentString(`
    query ChunksPage($id: ID!, $first: Int!, $after: String) {
  chunks(datasourceId: $id, first: $first, after: $after) {
    nodes {
      id
      position
      page
      tokenCount
      section
      text
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<ChunksPageQuery, ChunksPageQueryVariables>;
export const DatastorePageDocument = new TypedDocumentString(`
    query DatastorePage($id: ID!) {
  datastore(id: $id) {
    id
    name
    description
    visibility
    uploadPath
    embeddingModel
    chunkSize
    chunkOverlap
    createdAt
  }
  datasources(datastoreId: $id, first: 100) {
    nodes {
      ...DatasourceRow
    }
    pageInfo {
      hasNextPage
    }
  }
  me {
    organization {
      crawlPageLimit
    }
  }
}
    fragment DatasourceRow on Datasource {
  id
  name
  type
  status
  chunkCount
  size
  errorMessage
  updatedAt
}`) as unknown as TypedDocumentString<DatastorePageQuery, DatastorePageQueryVariables>;
export const DatasourceRowDocument = new TypedDocumentString(`
    query DatasourceRow($id: ID!) {
  datasource(id: $id) {
    ...DatasourceRow
  }
}
    fragment DatasourceRow on Datasource {
  id
  name
  type
  status
  chunkCount
  size
  errorMessage
  updatedAt
}`) as unknown as TypedDocumentString<DatasourceRowQuery, DatasourceRowQueryVariables>;
export const DatasourceStatusChangedDocument = new TypedDocumentString(`
    subscription DatasourceStatusChanged($datastoreId: ID!) {
  datasourceStatusChanged(datastoreId: $datastoreId) {
    id
    name
    type
    status
    chunkCount
    errorMessage
    at
  }
}
    `) as unknown as TypedDocumentString<DatasourceStatusChangedSubscription, DatasourceStatusChangedSubscriptionVariables>;
export const UpdateDatastoreDocument = new TypedDocumentString(`
    mutation UpdateDatastore($id: ID!, $input: UpdateDatastoreInput!) {
  updateDatastore(id: $id, input: $input) {
    id
    name
    description
    visibility
  }
}
    `) as unknown as TypedDocumentString<UpdateDatastoreMutation, UpdateDatastoreMutationVariables>;
export const DeleteDatastoreDocument = new TypedDocumentString(`
    mutation DeleteDatastore($id: ID!) {
  deleteDatastore(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteDatastoreMutation, DeleteDatastoreMutationVariables>;
export const CreateDatasourceDocument = new TypedDocumentString(`
    mutation CreateDatasource($input: CreateDatasourceInput!) {
  createDatasource(input: $input) {
    ...DatasourceRow
  }
}
    fragment DatasourceRow on Datasource {
  id
  name
  type
  status
  chunkCount
  size
  errorMessage
  updatedAt
}`) as unknown as TypedDocumentString<CreateDatasourceMutation, CreateDatasourceMutationVariables>;
export const ResyncDatasourceDocument = new TypedDocumentString(`
    mutation ResyncDatasource($id: ID!) {
  resyncDatasource(id: $id) {
    ...DatasourceRow
  }
}
    fragment DatasourceRow on Datasource {
  id
  name
  type
  status
  chunkCount
  size
  errorMessage
  updatedAt
}`) as unknown as TypedDocumentString<ResyncDatasourceMutation, ResyncDatasourceMutationVariables>;
export const DeleteDatasourceDocument = new TypedDocumentString(`
    mutation DeleteDatasource($id: ID!) {
  deleteDatasource(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteDatasourceMutation, DeleteDatasourceMutationVariables>;
export const SearchDatastoreDocument = new TypedDocumentString(`
    query SearchDatastore($id: ID!, $input: DatastoreQueryInput!) {
  datastoreQuery(id: $id, input: $input) {
    datasource_id
    datasource_name
    source
    page
    score
    text
  }
}
    `) as unknown as TypedDocumentString<SearchDatastoreQuery, SearchDatastoreQueryVariables>;
export const DatastoresDocument = new TypedDocumentString(`
    query Datastores($after: String) {
  datastores(first: 50, after: $after) {
    nodes {
      id
      name
      description
      visibility
      createdAt
      updatedAt
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<DatastoresQuery, DatastoresQueryVariables>;
export const CreateDatastoreDocument = new TypedDocumentString(`
    mutation CreateDatastore($input: CreateDatastoreInput!) {
  createDatastore(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreateDatastoreMutation, CreateDatastoreMutationVariables>;
export const FormPageDocument = new TypedDocumentString(`
    query FormPage($id: ID!) {
  form(id: $id) {
    id
    name
    intro
    published
    schema
    webhookUrl
    createdAt
    updatedAt
  }
}
    `) as unknown as TypedDocumentString<FormPageQuery, FormPageQueryVariables>;
export const FormSubmissionsDocument = new TypedDocumentString(`
    query FormSubmissions($formId: ID!) {
  formSubmissions(formId: $formId, first: 50) {
    nodes {
      id
      status
      values
      skipped
      currentField
      createdAt
      completedAt
      webhookError
    }
    pageInfo {
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<FormSubmissionsQuery, FormSubmissionsQueryVariables>;
export const UpdateFormDocument = new TypedDocumentString(`
    mutation UpdateForm($id: ID!, $input: UpdateFormInput!) {
  updateForm(id: $id, input: $input) {
    id
    name
    intro
    published
    schema
    webhookUrl
    createdAt
    updatedAt
  }
}
    `) as unknown as TypedDocumentString<UpdateFormMutation, UpdateFormMutationVariables>;
export const DeleteFormDocument = new TypedDocumentString(`
    mutation DeleteForm($id: ID!) {
  deleteForm(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteFormMutation, DeleteFormMutationVariables>;
export const FormChatDocument = new TypedDocumentString(`
    mutation FormChat($formId: ID!, $input: FormChatInput!) {
  formChat(formId: $formId, input: $input) {
    answer
    conversationId
    visitorId
    currentField
    isValid
    status
    values
  }
}
    `) as unknown as TypedDocumentString<FormChatMutation, FormChatMutationVariables>;
export const FormsDocument = new TypedDocumentString(`
    query Forms($after: String) {
  forms(first: 50, after: $after) {
    nodes {
      id
      name
      published
      updatedAt
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<FormsQuery, FormsQueryVariables>;
export const CreateFormDocument = new TypedDocumentString(`
    mutation CreateForm($input: CreateFormInput!) {
  createForm(input: $input) {
    form {
      id
    }
    webhookSecret
  }
}
    `) as unknown as TypedDocumentString<CreateFormMutation, CreateFormMutationVariables>;
export const ApiKeysDocument = new TypedDocumentString(`
    query ApiKeys {
  apiKeys {
    id
    name
    prefix
    createdAt
    lastUsedAt
    expiresAt
    revokedAt
    readOnly
    agentIds
    datastoreIds
  }
}
    `) as unknown as TypedDocumentString<ApiKeysQuery, ApiKeysQueryVariables>;
export const KeyScopeChoicesDocument = new TypedDocumentString(`
    query KeyScopeChoices($agentsAfter: String, $datastoresAfter: String, $agents: Boolean!, $datastores: Boolean!) {
  agents(first: 100, after: $agentsAfter) @include(if: $agents) {
    nodes {
      id
      name
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
  datastores(first: 100, after: $datastoresAfter) @include(if: $datastores) {
    nodes {
      id
      name
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<KeyScopeChoicesQuery, KeyScopeChoicesQueryVariables>;
export const CreateApiKeyDocument = new TypedDocumentString(`
    mutation CreateApiKey($input: CreateApiKeyInput!) {
  createApiKey(input: $input) {
    id
    key
  }
}
    `) as unknown as TypedDocumentString<CreateApiKeyMutation, CreateApiKeyMutationVariables>;
export const RevokeApiKeyDocument = new TypedDocumentString(`
    mutation RevokeApiKey($id: ID!) {
  revokeApiKey(id: $id) {
    id
    revokedAt
  }
}
    `) as unknown as TypedDocumentString<RevokeApiKeyMutation, RevokeApiKeyMutationVariables>;
export const OrganizationPageDocument = new TypedDocumentString(`
    query OrganizationPage {
  me {
    role
    organization {
      id
      name
      monthlyQueryLimit
      storedTokenLimit
      crawlPageLimit
      usage {
        period
        queriesThisMonth
        storedTokens
      }
    }
  }
}
    `) as unknown as TypedDocumentString<OrganizationPageQuery, OrganizationPageQueryVariables>;
export const MembersDocument = new TypedDocumentString(`
    query Members($after: String) {
  members(first: 50, after: $after) {
    nodes {
      id
      email
      role
      joinedAt
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
    `) as unknown as TypedDocumentString<MembersQuery, MembersQueryVariables>;
export const RenameOrganizationDocument = new TypedDocumentString(`
    mutation RenameOrganization($name: String!) {
  updateOrganization(name: $name) {
    id
    name
  }
}
    `) as unknown as TypedDocumentString<RenameOrganizationMutation, RenameOrganizationMutationVariables>;
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
export const SignUpDocument = new TypedDocumentString(`
    mutation SignUp($input: SignUpInput!) {
  signUp(input: $input) {
    expiresAt
  }
}
    `) as unknown as TypedDocumentString<SignUpMutation, SignUpMutationVariables>;
export const ServiceInfoDocument = new TypedDocumentString(`
    query ServiceInfo {
  serviceInfo {
    signupEnabled
  }
}
    `) as unknown as TypedDocumentString<ServiceInfoQuery, ServiceInfoQueryVariables>;
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