/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
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

export type LoginInput = {
  email: string;
  password: string;
};

export type MemberRole =
  | 'admin'
  | 'member'
  | 'owner';

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

export type Visibility =
  | 'private'
  | 'public';

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