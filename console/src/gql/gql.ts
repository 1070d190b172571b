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
    "\n  query UsageSummary {\n    me {\n      organization {\n        monthlyQueryLimit\n        storedTokenLimit\n        usage {\n          queriesThisMonth\n          storedTokens\n        }\n      }\n    }\n  }\n": typeof types.UsageSummaryDocument,
    "\n  query AgentPage($id: ID!) {\n    agent(id: $id) {\n      id\n      name\n      description\n      handle\n      modelName\n      temperature\n      visibility\n      systemPrompt\n      userPrompt\n      allowedOrigins\n      datastoreIds\n      createdAt\n      updatedAt\n    }\n  }\n": typeof types.AgentPageDocument,
    "\n  query AgentDatastoreChoices($after: String) {\n    datastores(first: 100, after: $after) {\n      nodes {\n        id\n        name\n        visibility\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": typeof types.AgentDatastoreChoicesDocument,
    "\n  mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) {\n    updateAgent(id: $id, input: $input) {\n      id\n      name\n      description\n      handle\n      modelName\n      temperature\n      visibility\n      systemPrompt\n      userPrompt\n      allowedOrigins\n      datastoreIds\n      createdAt\n      updatedAt\n    }\n  }\n": typeof types.UpdateAgentDocument,
    "\n  mutation DeleteAgent($id: ID!) {\n    deleteAgent(id: $id) {\n      id\n    }\n  }\n": typeof types.DeleteAgentDocument,
    "\n  query AgentList($after: String) {\n    agents(first: 50, after: $after) {\n      nodes {\n        id\n        name\n        handle\n        visibility\n        modelName\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": typeof types.AgentListDocument,
    "\n  mutation CreateAgent($input: CreateAgentInput!) {\n    createAgent(input: $input) {\n      id\n    }\n  }\n": typeof types.CreateAgentDocument,
    "\n  query Conversations($filter: ConversationFilter, $after: String) {\n    conversations(filter: $filter, first: 20, after: $after) {\n      nodes { id agentId formId visitorId channel createdAt updatedAt messageCount }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": typeof types.ConversationsDocument,
    "\n  query ConversationMessages($id: ID!) {\n    conversation(id: $id) {\n      id agentId visitorId channel createdAt\n      messages(first: 100) { nodes { id from text sources metadata createdAt } pageInfo { hasNextPage } }\n    }\n  }\n": typeof types.ConversationMessagesDocument,
    "\n  query DatasourcePage($id: ID!) {\n    datasource(id: $id) { id name type status chunkCount tokenCount size errorMessage datastoreId fileName mimeType config updatedAt }\n  }\n": typeof types.DatasourcePageDocument,
    "\n  query ChunksPage($id: ID!, $first: Int!, $after: String) {\n    chunks(datasourceId: $id, first: $first, after: $after) {\n      nodes { id position page tokenCount section text }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": typeof types.ChunksPageDocument,
    "\n  fragment DatasourceRow on Datasource {\n    id name type status chunkCount size errorMessage updatedAt\n  }\n": typeof types.DatasourceRowFragmentDoc,
    "\n  query DatastorePage($id: ID!) {\n    datastore(id: $id) { id name description visibility uploadPath embeddingModel chunkSize chunkOverlap createdAt }\n    datasources(datastoreId: $id, first: 100) {\n      nodes { ...DatasourceRow }\n      pageInfo { hasNextPage }\n    }\n    me { organization { crawlPageLimit } }\n  }\n": typeof types.DatastorePageDocument,
    "\n  query DatasourceRow($id: ID!) {\n    datasource(id: $id) { ...DatasourceRow }\n  }\n": typeof types.DatasourceRowDocument,
    "\n  subscription DatasourceStatusChanged($datastoreId: ID!) {\n    datasourceStatusChanged(datastoreId: $datastoreId) { id name type status chunkCount errorMessage at }\n  }\n": typeof types.DatasourceStatusChangedDocument,
    "\n  mutation UpdateDatastore($id: ID!, $input: UpdateDatastoreInput!) {\n    updateDatastore(id: $id, input: $input) { id name description visibility }\n  }\n": typeof types.UpdateDatastoreDocument,
    "\n  mutation DeleteDatastore($id: ID!) {\n    deleteDatastore(id: $id) { id }\n  }\n": typeof types.DeleteDatastoreDocument,
    "\n  mutation CreateDatasource($input: CreateDatasourceInput!) {\n    createDatasource(input: $input) { ...DatasourceRow }\n  }\n": typeof types.CreateDatasourceDocument,
    "\n  mutation ResyncDatasource($id: ID!) {\n    resyncDatasource(id: $id) { ...DatasourceRow }\n  }\n": typeof types.ResyncDatasourceDocument,
    "\n  mutation DeleteDatasource($id: ID!) {\n    deleteDatasource(id: $id) { id }\n  }\n": typeof types.DeleteDatasourceDocument,
    "\n  query SearchDatastore($id: ID!, $input: DatastoreQueryInput!) {\n    datastoreQuery(id: $id, input: $input) { datasource_id datasource_name source page score text }\n  }\n": typeof types.SearchDatastoreDocument,
    "\n  query Datastores($after: String) {\n    datastores(first: 50, after: $after) {\n      nodes { id name description visibility createdAt updatedAt }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": typeof types.DatastoresDocument,
    "\n  mutation CreateDatastore($input: CreateDatastoreInput!) {\n    createDatastore(input: $input) { id }\n  }\n": typeof types.CreateDatastoreDocument,
    "\n  query FormPage($id: ID!) {\n    form(id: $id) { id name intro published schema webhookUrl createdAt updatedAt }\n  }\n": typeof types.FormPageDocument,
    "\n  query FormSubmissions($formId: ID!) {\n    formSubmissions(formId: $formId, first: 50) {\n      nodes { id status values skipped currentField createdAt completedAt webhookError }\n      pageInfo { hasNextPage }\n    }\n  }\n": typeof types.FormSubmissionsDocument,
    "\n  mutation UpdateForm($id: ID!, $input: UpdateFormInput!) {\n    updateForm(id: $id, input: $input) { id name intro published schema webhookUrl createdAt updatedAt }\n  }\n": typeof types.UpdateFormDocument,
    "\n  mutation DeleteForm($id: ID!) {\n    deleteForm(id: $id) { id }\n  }\n": typeof types.DeleteFormDocument,
    "\n  mutation FormChat($formId: ID!, $input: FormChatInput!) {\n    formChat(formId: $formId, input: $input) { answer conversationId visitorId currentField isValid status values }\n  }\n": typeof types.FormChatDocument,
    "\n  query Forms($after: String) {\n    forms(first: 50, after: $after) {\n      nodes { id name published updatedAt }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": typeof types.FormsDocument,
    "\n  mutation CreateForm($input: CreateFormInput!) {\n    createForm(input: $input) { form { id } webhookSecret }\n  }\n": typeof types.CreateFormDocument,
    "\n  query ApiKeys {\n    apiKeys {\n      id\n      name\n      prefix\n      createdAt\n      lastUsedAt\n      expiresAt\n      revokedAt\n      readOnly\n      agentIds\n      datastoreIds\n    }\n  }\n": typeof types.ApiKeysDocument,
    "\n  query KeyScopeChoices($agentsAfter: String, $datastoresAfter: String, $agents: Boolean!, $datastores: Boolean!) {\n    agents(first: 100, after: $agentsAfter) @include(if: $agents) {\n      nodes {\n        id\n        name\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n    datastores(first: 100, after: $datastoresAfter) @include(if: $datastores) {\n      nodes {\n        id\n        name\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": typeof types.KeyScopeChoicesDocument,
    "\n  mutation CreateApiKey($input: CreateApiKeyInput!) {\n    createApiKey(input: $input) {\n      id\n      key\n    }\n  }\n": typeof types.CreateApiKeyDocument,
    "\n  mutation RevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) {\n      id\n      revokedAt\n    }\n  }\n": typeof types.RevokeApiKeyDocument,
    "\n  query OrganizationPage {\n    me {\n      role\n      organization {\n        id\n        name\n        monthlyQueryLimit\n        storedTokenLimit\n        crawlPageLimit\n        usage {\n          period\n          queriesThisMonth\n          storedTokens\n        }\n      }\n    }\n  }\n": typeof types.OrganizationPageDocument,
    "\n  query Members($after: String) {\n    members(first: 50, after: $after) {\n      nodes {\n        id\n        email\n        role\n        joinedAt\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": typeof types.MembersDocument,
    "\n  mutation RenameOrganization($name: String!) {\n    updateOrganization(name: $name) {\n      id\n      name\n    }\n  }\n": typeof types.RenameOrganizationDocument,
    "\n  query PlaygroundAgents {\n    agents(first: 100) { nodes { id name handle modelName temperature } }\n  }\n": typeof types.PlaygroundAgentsDocument,
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      expiresAt\n    }\n  }\n": typeof types.LoginDocument,
    "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) {\n      expiresAt\n    }\n  }\n": typeof types.SignUpDocument,
    "\n  query ServiceInfo {\n    serviceInfo {\n      signupEnabled\n    }\n  }\n": typeof types.ServiceInfoDocument,
    "\n  query Session {\n    me {\n      via\n      role\n      user { id email }\n      organization { id name }\n    }\n  }\n": typeof types.SessionDocument,
    "\n  mutation Logout {\n    logout\n  }\n": typeof types.LogoutDocument,
};
const documents: Documents = {
    "\n  query PublicAgent($id: ID!) {\n    agent(id: $id) { id name description }\n  }\n": types.PublicAgentDocument,
    "\n  subscription ChatStream($id: ID!, $input: AgentQueryInput!) {\n    agentQueryStream(id: $id, input: $input) {\n      type\n      text\n      response {\n        conversationId\n        visitorId\n        messageId\n        sources { source datasource_id datasource_name page score text }\n      }\n    }\n  }\n": types.ChatStreamDocument,
    "\n  query ChatHistory($id: ID!) {\n    conversation(id: $id) {\n      id\n      visitorId\n      messages(first: 100) { nodes { id from text sources } }\n    }\n  }\n": types.ChatHistoryDocument,
    "\n  query UsageSummary {\n    me {\n      organization {\n        monthlyQueryLimit\n        storedTokenLimit\n        usage {\n          queriesThisMonth\n          storedTokens\n        }\n      }\n    }\n  }\n": types.UsageSummaryDocument,
    "\n  query AgentPage($id: ID!) {\n    agent(id: $id) {\n      id\n      name\n      description\n      handle\n      modelName\n      temperature\n      visibility\n      systemPrompt\n      userPrompt\n      allowedOrigins\n      datastoreIds\n      createdAt\n      updatedAt\n    }\n  }\n": types.AgentPageDocument,
    "\n  query AgentDatastoreChoices($after: String) {\n    datastores(first: 100, after: $after) {\n      nodes {\n        id\n        name\n        visibility\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": types.AgentDatastoreChoicesDocument,
    "\n  mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) {\n    updateAgent(id: $id, input: $input) {\n      id\n      name\n      description\n      handle\n      modelName\n      temperature\n      visibility\n      systemPrompt\n      userPrompt\n      allowedOrigins\n      datastoreIds\n      createdAt\n      updatedAt\n    }\n  }\n": types.UpdateAgentDocument,
    "\n  mutation DeleteAgent($id: ID!) {\n    deleteAgent(id: $id) {\n      id\n    }\n  }\n": types.DeleteAgentDocument,
    "\n  query AgentList($after: String) {\n    agents(first: 50, after: $after) {\n      nodes {\n        id\n        name\n        handle\n        visibility\n        modelName\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": types.AgentListDocument,
    "\n  mutation CreateAgent($input: CreateAgentInput!) {\n    createAgent(input: $input) {\n      id\n    }\n  }\n": types.CreateAgentDocument,
    "\n  query Conversations($filter: ConversationFilter, $after: String) {\n    conversations(filter: $filter, first: 20, after: $after) {\n      nodes { id agentId formId visitorId channel createdAt updatedAt messageCount }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": types.ConversationsDocument,
    "\n  query ConversationMessages($id: ID!) {\n    conversation(id: $id) {\n      id agentId visitorId channel createdAt\n      messages(first: 100) { nodes { id from text sources metadata createdAt } pageInfo { hasNextPage } }\n    }\n  }\n": types.ConversationMessagesDocument,
    "\n  query DatasourcePage($id: ID!) {\n    datasource(id: $id) { id name type status chunkCount tokenCount size errorMessage datastoreId fileName mimeType config updatedAt }\n  }\n": types.DatasourcePageDocument,
    "\n  query ChunksPage($id: ID!, $first: Int!, $after: String) {\n    chunks(datasourceId: $id, first: $first, after: $after) {\n      nodes { id position page tokenCount section text }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": types.ChunksPageDocument,
    "\n  fragment DatasourceRow on Datasource {\n    id name type status chunkCount size errorMessage updatedAt\n  }\n": types.DatasourceRowFragmentDoc,
    "\n  query DatastorePage($id: ID!) {\n    datastore(id: $id) { id name description visibility uploadPath embeddingModel chunkSize chunkOverlap createdAt }\n    datasources(datastoreId: $id, first: 100) {\n      nodes { ...DatasourceRow }\n      pageInfo { hasNextPage }\n    }\n    me { organization { crawlPageLimit } }\n  }\n": types.DatastorePageDocument,
    "\n  query DatasourceRow($id: ID!) {\n    datasource(id: $id) { ...DatasourceRow }\n  }\n": types.DatasourceRowDocument,
    "\n  subscription DatasourceStatusChanged($datastoreId: ID!) {\n    datasourceStatusChanged(datastoreId: $datastoreId) { id name type status chunkCount errorMessage at }\n  }\n": types.DatasourceStatusChangedDocument,
    "\n  mutation UpdateDatastore($id: ID!, $input: UpdateDatastoreInput!) {\n    updateDatastore(id: $id, input: $input) { id name description visibility }\n  }\n": types.UpdateDatastoreDocument,
    "\n  mutation DeleteDatastore($id: ID!) {\n    deleteDatastore(id: $id) { id }\n  }\n": types.DeleteDatastoreDocument,
    "\n  mutation CreateDatasource($input: CreateDatasourceInput!) {\n    createDatasource(input: $input) { ...DatasourceRow }\n  }\n": types.CreateDatasourceDocument,
    "\n  mutation ResyncDatasource($id: ID!) {\n    resyncDatasource(id: $id) { ...DatasourceRow }\n  }\n": types.ResyncDatasourceDocument,
    "\n  mutation DeleteDatasource($id: ID!) {\n    deleteDatasource(id: $id) { id }\n  }\n": types.DeleteDatasourceDocument,
    "\n  query SearchDatastore($id: ID!, $input: DatastoreQueryInput!) {\n    datastoreQuery(id: $id, input: $input) { datasource_id datasource_name source page score text }\n  }\n": types.SearchDatastoreDocument,
    "\n  query Datastores($after: String) {\n    datastores(first: 50, after: $after) {\n      nodes { id name description visibility createdAt updatedAt }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": types.DatastoresDocument,
    "\n  mutation CreateDatastore($input: CreateDatastoreInput!) {\n    createDatastore(input: $input) { id }\n  }\n": types.CreateDatastoreDocument,
    "\n  query FormPage($id: ID!) {\n    form(id: $id) { id name intro published schema webhookUrl createdAt updatedAt }\n  }\n": types.FormPageDocument,
    "\n  query FormSubmissions($formId: ID!) {\n    formSubmissions(formId: $formId, first: 50) {\n      nodes { id status values skipped currentField createdAt completedAt webhookError }\n      pageInfo { hasNextPage }\n    }\n  }\n": types.FormSubmissionsDocument,
    "\n  mutation UpdateForm($id: ID!, $input: UpdateFormInput!) {\n    updateForm(id: $id, input: $input) { id name intro published schema webhookUrl createdAt updatedAt }\n  }\n": types.UpdateFormDocument,
    "\n  mutation DeleteForm($id: ID!) {\n    deleteForm(id: $id) { id }\n  }\n": types.DeleteFormDocument,
    "\n  mutation FormChat($formId: ID!, $input: FormChatInput!) {\n    formChat(formId: $formId, input: $input) { answer conversationId visitorId currentField isValid status values }\n  }\n": types.FormChatDocument,
    "\n  query Forms($after: String) {\n    forms(first: 50, after: $after) {\n      nodes { id name published updatedAt }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n": types.FormsDocument,
    "\n  mutation CreateForm($input: CreateFormInput!) {\n    createForm(input: $input) { form { id } webhookSecret }\n  }\n": types.CreateFormDocument,
    "\n  query ApiKeys {\n    apiKeys {\n      id\n      name\n      prefix\n      createdAt\n      lastUsedAt\n      expiresAt\n      revokedAt\n      readOnly\n      agentIds\n      datastoreIds\n    }\n  }\n": types.ApiKeysDocument,
    "\n  query KeyScopeChoices($agentsAfter: String, $datastoresAfter: String, $agents: Boolean!, $datastores: Boolean!) {\n    agents(first: 100, after: $agentsAfter) @include(if: $agents) {\n      nodes {\n        id\n        name\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n    datastores(first: 100, after: $datastoresAfter) @include(if: $datastores) {\n      nodes {\n        id\n        name\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": types.KeyScopeChoicesDocument,
    "\n  mutation CreateApiKey($input: CreateApiKeyInput!) {\n    createApiKey(input: $input) {\n      id\n      key\n    }\n  }\n": types.CreateApiKeyDocument,
    "\n  mutation RevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) {\n      id\n      revokedAt\n    }\n  }\n": types.RevokeApiKeyDocument,
    "\n  query OrganizationPage {\n    me {\n      role\n      organization {\n        id\n        name\n        monthlyQueryLimit\n        storedTokenLimit\n        crawlPageLimit\n        usage {\n          period\n          queriesThisMonth\n          storedTokens\n        }\n      }\n    }\n  }\n": types.OrganizationPageDocument,
    "\n  query Members($after: String) {\n    members(first: 50, after: $after) {\n      nodes {\n        id\n        email\n        role\n        joinedAt\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n": types.MembersDocument,
    "\n  mutation RenameOrganization($name: String!) {\n    updateOrganization(name: $name) {\n      id\n      name\n    }\n  }\n": types.RenameOrganizationDocument,
    "\n  query PlaygroundAgents {\n    agents(first: 100) { nodes { id name handle modelName temperature } }\n  }\n": types.PlaygroundAgentsDocument,
    "\n  mutation Login($input: LoginInput!) {\n    login(input: $input) {\n      expiresAt\n    }\n  }\n": types.LoginDocument,
    "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) {\n      expiresAt\n    }\n  }\n": types.SignUpDocument,
    "\n  query ServiceInfo {\n    serviceInfo {\n      signupEnabled\n    }\n  }\n": types.ServiceInfoDocument,
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
export function graphql(source: "\n  query UsageSummary {\n    me {\n      organization {\n        monthlyQueryLimit\n        storedTokenLimit\n        usage {\n          queriesThisMonth\n          storedTokens\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').UsageSummaryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AgentPage($id: ID!) {\n    agent(id: $id) {\n      id\n      name\n      description\n      handle\n      modelName\n      temperature\n      visibility\n      systemPrompt\n      userPrompt\n      allowedOrigins\n      datastoreIds\n      createdAt\n      updatedAt\n    }\n  }\n"): typeof import('./graphql.ts').AgentPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AgentDatastoreChoices($after: String) {\n    datastores(first: 100, after: $after) {\n      nodes {\n        id\n        name\n        visibility\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n"): typeof import('./graphql.ts').AgentDatastoreChoicesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) {\n    updateAgent(id: $id, input: $input) {\n      id\n      name\n      description\n      handle\n      modelName\n      temperature\n      visibility\n      systemPrompt\n      userPrompt\n      allowedOrigins\n      datastoreIds\n      createdAt\n      updatedAt\n    }\n  }\n"): typeof import('./graphql.ts').UpdateAgentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteAgent($id: ID!) {\n    deleteAgent(id: $id) {\n      id\n    }\n  }\n"): typeof import('./graphql.ts').DeleteAgentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AgentList($after: String) {\n    agents(first: 50, after: $after) {\n      nodes {\n        id\n        name\n        handle\n        visibility\n        modelName\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n"): typeof import('./graphql.ts').AgentListDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateAgent($input: CreateAgentInput!) {\n    createAgent(input: $input) {\n      id\n    }\n  }\n"): typeof import('./graphql.ts').CreateAgentDocument;
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
export function graphql(source: "\n  query DatasourcePage($id: ID!) {\n    datasource(id: $id) { id name type status chunkCount tokenCount size errorMessage datastoreId fileName mimeType config updatedAt }\n  }\n"): typeof import('./graphql.ts').DatasourcePageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ChunksPage($id: ID!, $first: Int!, $after: String) {\n    chunks(datasourceId: $id, first: $first, after: $after) {\n      nodes { id position page tokenCount section text }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n"): typeof import('./graphql.ts').ChunksPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment DatasourceRow on Datasource {\n    id name type status chunkCount size errorMessage updatedAt\n  }\n"): typeof import('./graphql.ts').DatasourceRowFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DatastorePage($id: ID!) {\n    datastore(id: $id) { id name description visibility uploadPath embeddingModel chunkSize chunkOverlap createdAt }\n    datasources(datastoreId: $id, first: 100) {\n      nodes { ...DatasourceRow }\n      pageInfo { hasNextPage }\n    }\n    me { organization { crawlPageLimit } }\n  }\n"): typeof import('./graphql.ts').DatastorePageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DatasourceRow($id: ID!) {\n    datasource(id: $id) { ...DatasourceRow }\n  }\n"): typeof import('./graphql.ts').DatasourceRowDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription DatasourceStatusChanged($datastoreId: ID!) {\n    datasourceStatusChanged(datastoreId: $datastoreId) { id name type status chunkCount errorMessage at }\n  }\n"): typeof import('./graphql.ts').DatasourceStatusChangedDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateDatastore($id: ID!, $input: UpdateDatastoreInput!) {\n    updateDatastore(id: $id, input: $input) { id name description visibility }\n  }\n"): typeof import('./graphql.ts').UpdateDatastoreDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteDatastore($id: ID!) {\n    deleteDatastore(id: $id) { id }\n  }\n"): typeof import('./graphql.ts').DeleteDatastoreDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateDatasource($input: CreateDatasourceInput!) {\n    createDatasource(input: $input) { ...DatasourceRow }\n  }\n"): typeof import('./graphql.ts').CreateDatasourceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResyncDatasource($id: ID!) {\n    resyncDatasource(id: $id) { ...DatasourceRow }\n  }\n"): typeof import('./graphql.ts').ResyncDatasourceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteDatasource($id: ID!) {\n    deleteDatasource(id: $id) { id }\n  }\n"): typeof import('./graphql.ts').DeleteDatasourceDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SearchDatastore($id: ID!, $input: DatastoreQueryInput!) {\n    datastoreQuery(id: $id, input: $input) { datasource_id datasource_name source page score text }\n  }\n"): typeof import('./graphql.ts').SearchDatastoreDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Datastores($after: String) {\n    datastores(first: 50, after: $after) {\n      nodes { id name description visibility createdAt updatedAt }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n"): typeof import('./graphql.ts').DatastoresDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateDatastore($input: CreateDatastoreInput!) {\n    createDatastore(input: $input) { id }\n  }\n"): typeof import('./graphql.ts').CreateDatastoreDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FormPage($id: ID!) {\n    form(id: $id) { id name intro published schema webhookUrl createdAt updatedAt }\n  }\n"): typeof import('./graphql.ts').FormPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FormSubmissions($formId: ID!) {\n    formSubmissions(formId: $formId, first: 50) {\n      nodes { id status values skipped currentField createdAt completedAt webhookError }\n      pageInfo { hasNextPage }\n    }\n  }\n"): typeof import('./graphql.ts').FormSubmissionsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateForm($id: ID!, $input: UpdateFormInput!) {\n    updateForm(id: $id, input: $input) { id name intro published schema webhookUrl createdAt updatedAt }\n  }\n"): typeof import('./graphql.ts').UpdateFormDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteForm($id: ID!) {\n    deleteForm(id: $id) { id }\n  }\n"): typeof import('./graphql.ts').DeleteFormDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FormChat($formId: ID!, $input: FormChatInput!) {\n    formChat(formId: $formId, input: $input) { answer conversationId visitorId currentField isValid status values }\n  }\n"): typeof import('./graphql.ts').FormChatDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Forms($after: String) {\n    forms(first: 50, after: $after) {\n      nodes { id name published updatedAt }\n      pageInfo { endCursor hasNextPage }\n    }\n  }\n"): typeof import('./graphql.ts').FormsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateForm($input: CreateFormInput!) {\n    createForm(input: $input) { form { id } webhookSecret }\n  }\n"): typeof import('./graphql.ts').CreateFormDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApiKeys {\n    apiKeys {\n      id\n      name\n      prefix\n      createdAt\n      lastUsedAt\n      expiresAt\n      revokedAt\n      readOnly\n      agentIds\n      datastoreIds\n    }\n  }\n"): typeof import('./graphql.ts').ApiKeysDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query KeyScopeChoices($agentsAfter: String, $datastoresAfter: String, $agents: Boolean!, $datastores: Boolean!) {\n    agents(first: 100, after: $agentsAfter) @include(if: $agents) {\n      nodes {\n        id\n        name\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n    datastores(first: 100, after: $datastoresAfter) @include(if: $datastores) {\n      nodes {\n        id\n        name\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n"): typeof import('./graphql.ts').KeyScopeChoicesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateApiKey($input: CreateApiKeyInput!) {\n    createApiKey(input: $input) {\n      id\n      key\n    }\n  }\n"): typeof import('./graphql.ts').CreateApiKeyDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) {\n      id\n      revokedAt\n    }\n  }\n"): typeof import('./graphql.ts').RevokeApiKeyDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrganizationPage {\n    me {\n      role\n      organization {\n        id\n        name\n        monthlyQueryLimit\n        storedTokenLimit\n        crawlPageLimit\n        usage {\n          period\n          queriesThisMonth\n          storedTokens\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').OrganizationPageDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Members($after: String) {\n    members(first: 50, after: $after) {\n      nodes {\n        id\n        email\n        role\n        joinedAt\n      }\n      pageInfo {\n        endCursor\n        hasNextPage\n      }\n    }\n  }\n"): typeof import('./graphql.ts').MembersDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RenameOrganization($name: String!) {\n    updateOrganization(name: $name) {\n      id\n      name\n    }\n  }\n"): typeof import('./graphql.ts').RenameOrganizationDocument;
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
export function graphql(source: "\n  mutation SignUp($input: SignUpInput!) {\n    signUp(input: $input) {\n      expiresAt\n    }\n  }\n"): typeof import('./graphql.ts').SignUpDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ServiceInfo {\n    serviceInfo {\n      signupEnabled\n    }\n  }\n"): typeof import('./graphql.ts').ServiceInfoDocument;
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
