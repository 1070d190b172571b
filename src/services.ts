import { AgentService } from './agents/agent.service.ts';
import { AuthService } from './auth/auth.service.ts';
import type { Config } from './config.ts';
import { DatastoreService } from './datastores/datastore.service.ts';

/** The domain services, built once per process and shared by GraphQL, REST and the CLI. */
export interface Services {
  config: Config;
  auth: AuthService;
  agents: AgentService;
  datastores: DatastoreService;
}

export function createServices(config: Config): Services {
  const datastores = new DatastoreService(config);
  return {
    config,
    auth: new AuthService(config),
    datastores,
    agents: new AgentService(datastores),
  };
}
