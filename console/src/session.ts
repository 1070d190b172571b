/** Who is signed in, for every page: read once at start, after sign-in, and cleared at sign-out. */
import { signal } from '@preact/signals';
import { graphql } from './gql/index.ts';
import type { SessionQuery } from './gql/graphql.ts';
import { GraphQLRequestError, request } from './graphql.ts';

export type Me = SessionQuery['me'];

const SessionDocument = graphql(`
  query Session {
    me {
      via
      role
      user { id email }
      organization { id name }
    }
  }
`);

const LogoutDocument = graphql(`
  mutation Logout {
    logout
  }
`);

/** undefined while loading, null when signed out. */
export const session = signal<Me | null | undefined>(undefined);

export async function refreshSession(): Promise<void> {
  try {
    session.value = (await request(SessionDocument)).me;
  } catch (err) {
    if (err instanceof GraphQLRequestError && (err.code === 'UNAUTHENTICATED' || err.code === 'FORBIDDEN')) session.value = null;
    else throw err;
  }
}

export async function signOut(): Promise<void> {
  await request(LogoutDocument);
  session.value = null;
}
