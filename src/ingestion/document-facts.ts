/**
 * What a knowledge-base client may filter fragments on, per document (datasource): its id,
 * name, custom id and the free metadata given with it. Read only for a datastore the caller was
 * already allowed to query (the caller checks access first).
 */
import type { Em } from '../db/orm.ts';
import { rawQuery } from '../db/raw.ts';

export interface DocumentFacts {
  id: string;
  name: string;
  customId: string | null;
  metadata: Record<string, unknown>;
}

/** The documents of a datastore (all of them, or those among `ids`), by id. One statement. */
export async function documentFacts(em: Em, datastoreId: string, ids?: readonly string[]): Promise<Map<string, DocumentFacts>> {
  const rows = await rawQuery<{ id: string; name: string; custom_id: string | null; metadata: Record<string, unknown> | string | null }>(
    em,
    `select id, name, custom_id, metadata from datasources where datastore_id = $1 and ($2::uuid[] is null or id = any($2::uuid[]))`,
    [datastoreId, ids ? [...ids] : null],
  );
  return new Map(
    rows.map((r) => [r.id, { id: r.id, name: r.name, customId: r.custom_id, metadata: (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata) ?? {} }]),
  );
}
