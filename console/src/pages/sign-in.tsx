import { useEffect, useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import { GraphQLRequestError, request } from '../graphql.ts';
import { refreshSession } from '../session.ts';
import { FieldError, fieldProps, FormError, problemOf, type Problem } from '../ui.tsx';

const LoginDocument = graphql(`
  mutation Login($input: LoginInput!) {
    login(input: $input) {
      expiresAt
    }
  }
`);

const SignUpDocument = graphql(`
  mutation SignUp($input: SignUpInput!) {
    signUp(input: $input) {
      expiresAt
    }
  }
`);

const ServiceInfoDocument = graphql(`
  query ServiceInfo {
    serviceInfo {
      signupEnabled
    }
  }
`);

const SIGN_UP_FIELDS = ['email', 'password', 'organizationName'] as const;

/** Shown instead of every page while nobody is signed in; also creates an account when sign-up is open. */
export function SignIn() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [signupEnabled, setSignupEnabled] = useState(false);
  const [mode, setMode] = useState<'sign-in' | 'sign-up'>('sign-in');
  const [problem, setProblem] = useState<Problem | null>(null);

  useEffect(() => {
    // Anyone may ask (no credentials, no error): the sign-up link is shown only when it can work.
    request(ServiceInfoDocument)
      .then((info) => setSignupEnabled(info.serviceInfo.signupEnabled))
      .catch(() => setSignupEnabled(false));
  }, []);

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

  async function onSignUp(event: SubmitEvent) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setProblem(null);
    try {
      await request(SignUpDocument, {
        input: { email: String(form.get('email')), password: String(form.get('password')), organizationName: String(form.get('organizationName')) },
      });
      await refreshSession();
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  function switchTo(next: 'sign-in' | 'sign-up') {
    setMode(next);
    setError(null);
    setProblem(null);
  }

  if (mode === 'sign-up') {
    return (
      <main class="container narrow">
        <h1>Create an account</h1>
        <form onSubmit={onSignUp}>
          <label>
            Email
            <input {...fieldProps(problem, 'email')} type="email" autoComplete="username" required />
            <FieldError problem={problem} field="email" />
          </label>
          <label>
            Password
            <input {...fieldProps(problem, 'password')} type="password" autoComplete="new-password" minLength={8} required />
            <FieldError problem={problem} field="password" />
          </label>
          <label>
            Organization
            <input {...fieldProps(problem, 'organizationName')} type="text" autoComplete="organization" required />
            <FieldError problem={problem} field="organizationName" />
          </label>
          <FormError problem={problem} fields={SIGN_UP_FIELDS} />
          <button type="submit" aria-busy={busy} disabled={busy}>
            Sign up
          </button>
        </form>
        <p>
          Already have an account?{' '}
          <button type="button" class="link" onClick={() => switchTo('sign-in')}>
            Sign in instead
          </button>
        </p>
      </main>
    );
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
      {signupEnabled && (
        <p>
          New here?{' '}
          <button type="button" class="link" onClick={() => switchTo('sign-up')}>
            Create an account
          </button>
        </p>
      )}
    </main>
  );
}
