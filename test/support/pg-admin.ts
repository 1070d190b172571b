/** Statements on a PostgreSQL server's maintenance connection: creating and dropping the tests' and benchmarks' databases. */
import pg from 'pg';

export async function adminQuery<R extends pg.QueryResultRow = Record<string, unknown>>(server: string, text: string, params: unknown[] = []): Promise<R[]> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    return (await admin.query<R>(text, params)).rows;
  } finally {
    await admin.end();
  }
}

/** The URL of database `name` on `server`'s server. */
export function databaseUrl(server: string, name: string): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}
