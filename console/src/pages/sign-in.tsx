import { useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import { GraphQLRequestError, request } from '../graphql.ts';
import { refreshSession } from '../session.ts';

const LoginDocument = graphql(`
  mutation Login($input: LoginInput!) {
    login(input: $input) {
      expiresAt
    }
  }
`);

/** Shown instead of every page while nobody is signed in. */
export function SignIn() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await request(LoginDocument, { input: { email: String(form.get('email')), password: String(form.get('password')) } });
      await refreshSession();
    } catch (err) {
      setError(err instanceof GraphQLRequestError ? err.message : 'Sign-in failed.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="container narrow">
      <h1>Sign in</h1>
      <form onSubmit={onSubmit}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit" aria-busy={busy} disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
