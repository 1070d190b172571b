/**
 * The GraphQL IDE at GET /graphql: GraphiQL 5 (React, Monaco) from this build, no CDN. Its Monaco
 * web workers are files of this build too (graphiql's Vite setup, `?worker` imports). It is its
 * own entry (console/ide.html), so nothing of it loads on the console's pages.
 */
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import './ide.css';
import { GraphiQL } from 'graphiql';
import { createElement as h } from 'react';
import { createRoot } from 'react-dom/client';
import { createFetcher, SCHEMA_UNAVAILABLE } from './fetcher.ts';
import { plainTabButtons } from './tab-roles.ts';

const DEFAULT_QUERY = `# The GraphQL API of this service, signed in with the console's session.
# Run with Ctrl-Enter; the schema is in the documentation explorer (the book icon).
# Subscriptions (datasourceStatusChanged, agentQueryStream…) stream over /graphql/stream.
# To try an API key instead, add {"Authorization": "Bearer <key>"} under Headers.

query Me {
  me {
    via
    role
    organization { id name }
  }
}
`;

// A link may carry the operation to open: /graphql?query=…&variables=… (as GraphiQL's own examples do).
const params = new URLSearchParams(location.search);
const linked = {
  ...(params.get('query') ? { initialQuery: params.get('query') } : {}),
  ...(params.get('variables') ? { initialVariables: params.get('variables') } : {}),
};

const notice = document.getElementById('ide-notice')!;
const fetcher = createFetcher({
  onSchemaUnavailable() {
    notice.textContent = SCHEMA_UNAVAILABLE;
    notice.hidden = false;
  },
});

const root = document.getElementById('ide')!;
plainTabButtons(root);
createRoot(root).render(
  h(
    GraphiQL,
    { fetcher, defaultQuery: DEFAULT_QUERY, defaultEditorToolsVisibility: Boolean(linked.initialVariables), ...linked },
    h(GraphiQL.Logo, null, h('h1', null, h('a', { href: '/', className: 'ide-home' }, 'agentbase'), ' GraphQL IDE')),
  ),
);
