/**
 * The console's places, in the order of its navigation. A page is a component given the path's
 * parameters. Add a row to add a page (and `nav` to list it in the header).
 */
import type { ComponentType } from 'preact';
import { Overview } from './pages/overview.tsx';
import { OrganizationPage } from './pages/organization.tsx';
import { KeysPage } from './pages/keys.tsx';
import { AgentsPage } from './pages/agents.tsx';
import { AgentPage } from './pages/agent.tsx';
import { Datastores } from './pages/datastores.tsx';
import { DatastorePage } from './pages/datastore.tsx';
import { DatasourcePage } from './pages/datasource.tsx';
import { Forms } from './pages/forms.tsx';
import { FormPage } from './pages/form.tsx';
import { Playground } from './pages/playground.tsx';
import { ConversationView, Conversations } from './pages/conversations.tsx';

export interface Route {
  /** Hash path with `:name` parameters, e.g. `/datastores/:id`. */
  path: string;
  title: string;
  page: ComponentType<{ params: Record<string, string> }>;
  /** Shown in the header's navigation. */
  nav?: boolean;
}

export const routes: Route[] = [
  { path: '/', title: 'Overview', page: Overview, nav: true },
  { path: '/organization', title: 'Organization', page: OrganizationPage, nav: true },
  { path: '/keys', title: 'API keys', page: KeysPage, nav: true },
  { path: '/agents', title: 'Agents', page: AgentsPage, nav: true },
  { path: '/agents/:id', title: 'Agent', page: AgentPage },
  { path: '/datastores', title: 'Datastores', page: Datastores, nav: true },
  { path: '/datastores/:id', title: 'Datastore', page: DatastorePage },
  { path: '/datasources/:id', title: 'Datasource', page: DatasourcePage },
  { path: '/forms', title: 'Forms', page: Forms, nav: true },
  { path: '/forms/:id', title: 'Form', page: FormPage },
  { path: '/playground', title: 'Playground', page: Playground, nav: true },
  { path: '/playground/:agentId', title: 'Playground', page: Playground },
  { path: '/conversations', title: 'Conversations', page: Conversations, nav: true },
  { path: '/conversations/:id', title: 'Conversation', page: ConversationView },
];
