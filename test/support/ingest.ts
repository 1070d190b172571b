/**
 * What the ingestion tests do over and over, as a client would: create a datastore, upload a
 * file (multipart), read a datasource until it settles, and read its chunks straight from the
 * database the service writes to.
 */
import { readFileSync } from 'node:fs';
import type { TestApp } from './app.ts';
import { gql } from './client.ts';
import { waitFor } from './wait.ts';

export const SETTLED = ['synched', 'error', 'usage_limit_reached'] as const;

export async function createDatastore(app: TestApp, token: string, visibility: 'public' | 'private' = 'private', name = `DS ${visibility}`): Promise<string> {
  const res = await gql(app.url, `mutation($i: CreateDatastoreInput!) { createDatastore(input: $i) { id } }`, { i: { name, visibility } }, { token });
  if (!res.data) throw new Error(`createDatastore failed: ${JSON.stringify(res.errors)}`);
  return res.data.createDatastore.id as string;
}

export interface DatasourceView {
  id: string;
  status: string;
  errorMessage: string | null;
  chunkCount: number;
  tokenCount: number;
  name: string;
  type: string;
}

export async function datasource(app: TestApp, token: string, id: string): Promise<DatasourceView | undefined> {
  const res = await gql(app.url, `query($id: ID!) { datasource(id: $id) { id status errorMessage chunkCount tokenCount name type } }`, { id }, { token });
  return res.data?.datasource;
}

/** Polls until the datasource reaches synched, error or usage_limit_reached. */
export function settled(app: TestApp, token: string, id: string, ms = 30_000): Promise<DatasourceView> {
  return waitFor(
    async () => {
      const ds = await datasource(app, token, id);
      return ds && (SETTLED as readonly string[]).includes(ds.status) ? ds : undefined;
    },
    ms,
    `datasource ${id} to settle`,
  );
}

/** Multipart POST of one file as the part `file`, with a real API key (endpoint 5 by default). */
export async function upload(
  app: TestApp,
  token: string | null,
  datastoreId: string,
  file: { name: string; type: string; data: Buffer | string },
  opts: { path?: string; fields?: Record<string, string> } = {},
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
  form.append('file', new Blob([file.data], { type: file.type }), file.name);
  const res = await fetch(`${app.api}${opts.path ?? `/external/datastores/file-upload/${datastoreId}`}`, {
    method: 'POST',
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* the test sees the text */
  }
  return { status: res.status, body };
}

export function sql<T = any>(app: TestApp, query: string, params: unknown[] = []): Promise<T[]> {
  return app.db.orm.em.getConnection().execute(query, params) as Promise<T[]>;
}

export interface ChunkRow {
  position: number;
  page: number | null;
  text: string;
  metadata: Record<string, unknown>;
}

export function chunks(app: TestApp, datasourceId: string): Promise<ChunkRow[]> {
  return sql<ChunkRow>(app, 'select position, page, text, metadata from chunks where datasource_id = ? order by position', [datasourceId]);
}

/**
 * A datastore holding documents of the evaluation set (eval/corpus/<name>.md), uploaded as
 * Markdown files and ingested, and an agent answering from it (without a chat model: the
 * extractive answerer).
 */
export async function corpusAgent(app: TestApp, token: string, names: string[]): Promise<{ datastoreId: string; agentId: string }> {
  const datastoreId = await createDatastore(app, token, 'private', 'Guides');
  for (const name of names) {
    const text = readFileSync(new URL(`../../eval/corpus/${name}.md`, import.meta.url), 'utf8');
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/markdown' }), `${name}.md`);
    const res = await fetch(`${app.api}/external/datastores/file-upload/${datastoreId}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as any;
    if (res.status !== 200) throw new Error(`upload of ${name} answered ${res.status}: ${JSON.stringify(body)}`);
    const id = body.id ?? body.datasource?.id ?? body[0]?.id;
    await waitFor(async () => (await datasource(app, token, id))?.status === 'synched', 60_000);
  }
  const agent = await gql(app.url, `mutation($d: [ID!]) { createAgent(input: { name: "Guide", datastoreIds: $d }) { id } }`, { d: [datastoreId] }, { token });
  if (!agent.data) throw new Error(`createAgent failed: ${JSON.stringify(agent.errors)}`);
  return { datastoreId, agentId: agent.data.createAgent.id as string };
}
