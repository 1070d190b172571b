import { useEffect, useState } from 'preact/hooks';
import '../data-ui/data.css';
import { formatBytes, formatDate, problemOf, type Problem } from '../ui.tsx';
import { graphql } from '../gql/index.ts';
import type { ChunksPageQuery, DatasourcePageQuery } from '../gql/graphql.ts';
import { request } from '../graphql.ts';

const DatasourcePageDocument = graphql(`
  query DatasourcePage($id: ID!) {
    datasource(id: $id) { id name type status chunkCount tokenCount size errorMessage datastoreId fileName mimeType config updatedAt }
  }
`);

const ChunksPageDocument = graphql(`
  query ChunksPage($id: ID!, $first: Int!, $after: String) {
    chunks(datasourceId: $id, first: $first, after: $after) {
      nodes { id position page tokenCount section text }
      pageInfo { endCursor hasNextPage }
    }
  }
`);

const PAGE_SIZE = 10;

/** A datasource and its chunks, page by page, as they are stored and searched. */
export function DatasourcePage({ params }: { params: Record<string, string> }) {
  const id = params.id!;
  const [datasource, setDatasource] = useState<DatasourcePageQuery['datasource'] | null>(null);
  const [chunks, setChunks] = useState<ChunksPageQuery['chunks'] | null>(null);
  // The cursors of the pages before this one: `after` of page n is cursors[n].
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [problem, setProblem] = useState<Problem | null>(null);

  useEffect(() => {
    request(DatasourcePageDocument, { id })
      .then((d) => setDatasource(d.datasource))
      .catch((err) => setProblem(problemOf(err)));
  }, [id]);

  const after = cursors.at(-1) ?? null;
  useEffect(() => {
    setChunks(null);
    request(ChunksPageDocument, { id, first: PAGE_SIZE, after })
      .then((d) => setChunks(d.chunks))
      .catch((err) => setProblem(problemOf(err)));
  }, [id, after]);

  if (problem)
    return (
      <section>
        <h1>Datasource</h1>
        <p role="alert" class="error">
          {problem.message}
        </p>
      </section>
    );
  if (!datasource) return <p aria-busy="true">Loading the datasource…</p>;

  const pageNumber = cursors.length;
  const firstPosition = (pageNumber - 1) * PAGE_SIZE;
  return (
    <section>
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href="#/datastores">Datastores</a>
          </li>
          <li>
            <a href={`#/datastores/${datasource.datastoreId}`}>Datastore</a>
          </li>
          <li>{datasource.name}</li>
        </ul>
      </nav>
      <h1>{datasource.name}</h1>
      <dl class="grid">
        <div>
          <dt>Type</dt>
          <dd>{datasource.type.replace('_', ' ')}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd class={`status-${datasource.status}`}>{datasource.status}</dd>
        </div>
        <div>
          <dt>Chunks</dt>
          <dd>{datasource.chunkCount}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{datasource.tokenCount}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{formatBytes(datasource.size)}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>{formatDate(datasource.updatedAt)}</dd>
        </div>
      </dl>
      {datasource.errorMessage && (
        <p role="alert" class="error">
          {datasource.errorMessage}
        </p>
      )}

      <h2 id="chunks-heading">Chunks</h2>
      {chunks === null ? (
        <p aria-busy="true">Loading chunks…</p>
      ) : chunks.nodes.length === 0 ? (
        <p class="muted">No chunk stored{pageNumber > 1 ? ' after this point' : ' yet'}.</p>
      ) : (
        <>
          <p class="muted">
            Chunks {firstPosition + 1} to {firstPosition + chunks.nodes.length} of {datasource.chunkCount}
          </p>
          <ol aria-labelledby="chunks-heading" start={firstPosition + 1}>
            {chunks.nodes.map((c) => (
              <li key={c.id}>
                <article>
                  <header class="muted">
                    Position {c.position}
                    {c.page != null && <> · page {c.page}</>} · {c.tokenCount} tokens
                    {c.section && <> · {c.section}</>}
                  </header>
                  <p class="chunk">{c.text}</p>
                </article>
              </li>
            ))}
          </ol>
        </>
      )}
      <div class="row-actions" role="group" aria-label="Chunk pages">
        <button type="button" class="secondary" disabled={pageNumber === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Previous chunks
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!chunks?.pageInfo.hasNextPage}
          onClick={() => chunks?.pageInfo.endCursor && setCursors((c) => [...c, chunks.pageInfo.endCursor])}
        >
          Next chunks
        </button>
      </div>
    </section>
  );
}
