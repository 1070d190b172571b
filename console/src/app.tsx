import { useEffect } from 'preact/hooks';
import { routes } from './routes.ts';
import { match, usePath } from './router.ts';
import { refreshSession, session, signOut } from './session.ts';
import { SignIn } from './pages/sign-in.tsx';

export function App() {
  const path = usePath();
  useEffect(() => {
    refreshSession().catch(() => (session.value = null));
  }, []);

  const me = session.value;
  if (me === undefined) return <main class="container" aria-busy="true" aria-label="Loading" />;
  if (me === null) return <SignIn />;

  let found: { route: (typeof routes)[number]; params: Record<string, string> } | null = null;
  for (const route of routes) {
    const params = match(route.path, path);
    if (params) {
      found = { route, params };
      break;
    }
  }
  useEffect(() => {
    document.title = `${found?.route.title ?? 'Not found'} · agentbase`;
  }, [found?.route.title]);

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="container">
        <nav aria-label="Main">
          <ul>
            <li>
              <strong>agentbase</strong>
            </li>
          </ul>
          <ul>
            {routes
              .filter((r) => r.nav)
              .map((r) => (
                <li key={r.path}>
                  <a href={`#${r.path}`} aria-current={found?.route === r ? 'page' : undefined}>
                    {r.title}
                  </a>
                </li>
              ))}
            <li>
              <a href="/graphql">GraphQL IDE</a>
            </li>
            <li>
              <span class="muted">{me.user?.email ?? me.organization.name}</span>
            </li>
            <li>
              <button type="button" class="secondary outline" onClick={() => void signOut()}>
                Sign out
              </button>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" class="container" tabIndex={-1}>
        {found ? <found.route.page params={found.params} /> : <NotFound />}
      </main>
    </>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing lives at this address. <a href="#/">Back to the overview</a>.
      </p>
    </section>
  );
}
