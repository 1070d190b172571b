/**
 * The console's places, in the order of its navigation. A page is a component given the path's
 * parameters. Add a row to add a page (and `nav` to list it in the header).
 */
import type { ComponentType } from 'preact';
import { Overview } from './pages/overview.tsx';
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
  { path: '/playground', title: 'Playground', page: Playground, nav: true },
  { path: '/playground/:agentId', title: 'Playground', page: Playground },
  { path: '/conversations', title: 'Conversations', page: Conversations, nav: true },
  { path: '/conversations/:id', title: 'Conversation', page: ConversationView },
];
