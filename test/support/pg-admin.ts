/** Statements on a PostgreSQL server's maintenance connection: creating and dropping the tests' databases. */
import pg from 'pg';

export async function adminQuery(server: string, text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(text);
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
