import { AgentService } from './agents/agent.service.ts';
import { AuthService } from './auth/auth.service.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { DatastoreService } from './datastores/datastore.service.ts';
import type { EventBus } from './events/bus.ts';
import { DatasourceService } from './ingestion/datasource.service.ts';
import { ResyncSchedules } from './ingestion/resync.schedules.ts';
import { DatasourceProblems } from './ingestion/problems.service.ts';
import type { Embedder } from './providers/embeddings.ts';
import type { ChatModel } from './providers/chat.ts';
import { AnswerService } from './answers/answer.service.ts';
import { ConversationService } from './conversations/conversation.service.ts';
import { FormService } from './forms/form.service.ts';
import { Limits } from './limits/limits.ts';
import { RetrievalService } from './retrieval/retrieval.service.ts';
import { createReranker } from './providers/rerank.ts';
import type { ObjectStorage } from './providers/storage.ts';
import type { Queue } from './queue/queue.ts';
import { UniversalService } from './universal/universal.service.ts';
import { EmbedderRegistry } from './providers/embedder-registry.ts';
import { QueryVectors } from './retrieval/query-vectors.ts';
import { ModelChanges } from './datastores/model-change.ts';
import { OrganizationService } from './organizations/organization.service.ts';

/** The domain services, built once per process and shared by GraphQL, REST, workers and the CLI. */
export interface Services {
  config: Config;
  bus: EventBus;
  storage: ObjectStorage;
  queue: Queue;
  embedder: Embedder;
  /** The embedder of each datastore's model (the configured one among them). */
  embedders: EmbedderRegistry;
  auth: AuthService;
  agents: AgentService;
  datastores: DatastoreService;
  datasources: DatasourceService;
  retrieval: RetrievalService;
  /** Every limit (monthly queries, stored tokens, crawl pages, request rates, sign-in), one instance per process. */
  limits: Limits;
  answers: AnswerService;
  conversations: ConversationService;
  forms: FormService;
  universal: UniversalService;
  /** Failed and stuck datasources: listed, retried, swept. */
  problems: DatasourceProblems;
  /** The caller's organization: name, members, usage; what signed-out pages may know. */
  organizations: OrganizationService;
}

export interface Parts {
  bus: EventBus;
  storage: ObjectStorage;
  queue: Queue;
  embedder: Embedder;
  chat: ChatModel | null;
  /** Where the services that call model endpoints themselves log their failures. */
  logger?: Logger;
  /** Applied to embedders made for datastores on other models than `embedder`'s (metrics). */
  wrapEmbedder?: (embedder: Embedder) => Embedder;
}

export async function createServices(config: Config, parts: Parts): Promise<Services> {
  const embedders = new EmbedderRegistry(config, parts.embedder, parts.logger, parts.wrapEmbedder);
  const resyncSchedules = new ResyncSchedules(parts.queue);
  const datastores = new DatastoreService(parts.embedder, parts.storage, parts.bus, new ModelChanges(embedders, parts.queue, parts.bus), resyncSchedules);
  const agents = new AgentService(datastores, parts.bus);
  const { chat, logger, ...shared } = parts;
  const limits = new Limits(config.rateLimits, config.authRates);
  const retrieval = new RetrievalService(parts.embedder, datastores, limits, createReranker(config, logger), embedders, new QueryVectors(config.embeddingQueryCache));
  const conversations = new ConversationService();
  const services: Services = {
    config,
    ...shared,
    embedders,
    auth: new AuthService(config, parts.bus, limits),
    datastores,
    agents,
    datasources: new DatasourceService(config, parts.storage, parts.queue, parts.bus, resyncSchedules),
    retrieval,
    limits,
    answers: new AnswerService(config, agents, retrieval, chat, limits, conversations),
    conversations,
    forms: new FormService(config, parts.queue, chat, limits, conversations),
    universal: new UniversalService(config, chat, agents, limits, { logger }),
    problems: undefined as never, // below: it works through the datasources service
    organizations: new OrganizationService(config, limits),
  };
  services.problems = new DatasourceProblems(services.datasources);
  await Promise.all([services.auth.init(), services.agents.init(), datastores.init()]);
  return services;
}
