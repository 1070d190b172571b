import { AgentService } from './agents/agent.service.ts';
import { AuthService } from './auth/auth.service.ts';
import type { Config } from './config.ts';
import { DatastoreService } from './datastores/datastore.service.ts';
import type { EventBus } from './events/bus.ts';
import { DatasourceService } from './ingestion/datasource.service.ts';
import type { Embedder } from './providers/embeddings.ts';
import type { ChatModel } from './providers/chat.ts';
import { AnswerService } from './answers/answer.service.ts';
import { QueryAllowance } from './answers/usage.ts';
import { ConversationService } from './conversations/conversation.service.ts';
import { FormService } from './forms/form.service.ts';
import { RetrievalService } from './retrieval/retrieval.service.ts';
import type { ObjectStorage } from './providers/storage.ts';
import type { Queue } from './queue/queue.ts';
import { UniversalService } from './universal/universal.service.ts';

/** The domain services, built once per process and shared by GraphQL, REST, workers and the CLI. */
export interface Services {
  config: Config;
  bus: EventBus;
  storage: ObjectStorage;
  queue: Queue;
  embedder: Embedder;
  auth: AuthService;
  agents: AgentService;
  datastores: DatastoreService;
  datasources: DatasourceService;
  retrieval: RetrievalService;
  /** The monthly query allowance as answers use it (one query reserved ahead per organization). */
  allowance: QueryAllowance;
  answers: AnswerService;
  conversations: ConversationService;
  forms: FormService;
  universal: UniversalService;
}

export interface Parts {
  bus: EventBus;
  storage: ObjectStorage;
  queue: Queue;
  embedder: Embedder;
  chat: ChatModel | null;
}

export async function createServices(config: Config, parts: Parts): Promise<Services> {
  const datastores = new DatastoreService(parts.embedder, parts.storage, parts.bus);
  const agents = new AgentService(datastores, parts.bus);
  const retrieval = new RetrievalService(parts.embedder, datastores);
  const { chat, ...shared } = parts;
  const allowance = new QueryAllowance();
  const services: Services = {
    config,
    ...shared,
    auth: new AuthService(config, parts.bus),
    datastores,
    agents,
    datasources: new DatasourceService(config, parts.storage, parts.queue, parts.bus),
    retrieval,
    allowance,
    answers: new AnswerService(config, agents, retrieval, chat, allowance),
    conversations: new ConversationService(),
    forms: new FormService(config, parts.queue, chat),
    universal: new UniversalService(config, chat, agents),
  };
  await Promise.all([services.auth.init(), services.agents.init(), datastores.init()]);
  return services;
}
