/**
 * A datasource's chunks as its organization reads them: in document order, page by page. Only the
 * organization (within a key's datastores) may page through them, also for a public datastore:
 * public readers search it (datastoreQuery), they do not get to copy it out whole.
 */
import type { Auth } from '../auth/auth.ts';
import type { Em } from '../db/orm.ts';
import { badInput } from '../errors.ts';
import { pageArgs, toPage, type Page } from '../graphql/pagination.ts';
import { Chunk } from './chunk.entity.ts';
import { estimateTokens } from './chunker.ts';
import type { DatasourceService } from './datasource.service.ts';

export interface ChunkRecord {
  id: string;
  text: string;
  position: number;
  page: number | null;
  tokenCount: number;
  section: string | null;
}

/**
 * A page of the datasource's chunks by position; the cursor is the last chunk's id (chunk ids are
 * not in document order, positions are). Throws UNAUTHENTICATED, NOT_FOUND (unknown datasource,
 * another organization's, outside the key's datastores), BAD_USER_INPUT (first, after).
 */
export async function chunkPage(em: Em, datasources: DatasourceService, auth: Auth, args: { datasourceId: string; first: number; after?: string | null }): Promise<Page<ChunkRecord>> {
  const ds = await datasources.get(em, auth, args.datasourceId);
  const page = pageArgs(args.first, args.after);
  let from = -1;
  if (page.after) {
    const last = await em.findOne(Chunk, { id: page.after, datasource: ds.id }, { fields: ['position'] });
    if (!last) throw badInput("after is not a cursor of this datasource's chunks.", { field: 'after' });
    from = last.position;
  }
  // The embedding is left out: the page shows text, and vectors are most of a chunk's bytes.
  const rows = await em.find(
    Chunk,
    { datasource: ds.id, position: { $gt: from } },
    { fields: ['id', 'position', 'page', 'text', 'metadata'], orderBy: { position: 'asc' }, limit: page.first + 1 },
  );
  const { nodes, pageInfo } = toPage(rows, page.first);
  return { nodes: nodes.map(recordOf), pageInfo };
}

function recordOf(c: Pick<Chunk, 'id' | 'text' | 'position' | 'page' | 'metadata'>): ChunkRecord {
  const section = (c.metadata as Record<string, unknown> | undefined)?.section;
  return {
    id: c.id,
    text: c.text,
    position: c.position,
    page: c.page ?? null,
    tokenCount: estimateTokens(c.text),
    section: typeof section === 'string' ? section : null,
  };
}
