/**
 * Hash routes (`/#/agents`): the service's own paths belong to REST (`/agents/{id}/query`…), so
 * the console keeps its places after the `#`. Small enough not to need a router library: the
 * ones we have route on the pathname.
 */
import { useEffect, useState } from 'preact/hooks';

export function currentPath(): string {
  const hash = location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash : '/';
}

export function navigate(path: string): void {
  location.hash = path;
}

/** The current path, re-rendering on every change. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return path;
}

/** `/datastores/:id` against `/datastores/abc` → { id: 'abc' }; null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('?')[0]!.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}
