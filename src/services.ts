import { AgentService } from './agents/agent.service.ts';
import { AuthService } from './auth/auth.service.ts';
import type { Config } from './config.ts';
import { DatastoreService } from './datastores/datastore.service.ts';
import type { EventBus } from './events/bus.ts';

/** The domain services, built once per process and shared by GraphQL, REST and the CLI. */
export interface Services {
  config: Config;
  bus: EventBus;
  auth: AuthService;
  agents: AgentService;
  datastores: DatastoreService;
}

export async function createServices(config: Config, bus: EventBus): Promise<Services> {
  const datastores = new DatastoreService(config);
  const services: Services = {
    config,
    bus,
    auth: new AuthService(config, bus),
    datastores,
    agents: new AgentService(datastores, bus),
  };
  await Promise.all([services.auth.init(), services.agents.init()]);
  return services;
}
