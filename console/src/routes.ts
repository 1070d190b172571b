/**
 * The console's places, in the order of its navigation. A page is a component given the path's
 * parameters. Add a row to add a page (and `nav` to list it in the header).
 */
import type { ComponentType } from 'preact';
import { Overview } from './pages/overview.tsx';

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
];
