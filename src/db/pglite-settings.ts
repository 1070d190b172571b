import { PGlite } from '@electric-sql/pglite';
import { DEFAULT_PGLITE_SHARED_BUFFERS_MB } from '../config.ts';

/**
 * Server settings of the embedded database, chosen for a process that also runs the service
 * (figures in docs/operations.md#memory):
 *  - shared_buffers: PostgreSQL's default is 128 MB, and in PGlite every byte of it is resident
 *    from the start (Emscripten zeroes what Postgres maps), so it alone was an eighth of the
 *    process. PGlite reads its files through the operating system, whose page cache keeps the
 *    pages shared_buffers lets go of: a smaller pool costs system calls, not disk reads.
 *  - maintenance_work_mem stays at 64 MB: it is taken only while an index is built, and an HNSW
 *    build whose graph does not fit in it is many times slower (re-embedding a datastore
 *    rebuilds one).
 *  - wal_buffers follows shared_buffers (1/32 of it) unless set; 1 MB is plenty for one writer.
 */
export function pgliteStartParams(sharedBuffersMb: number = DEFAULT_PGLITE_SHARED_BUFFERS_MB): string[] {
  const settings: Record<string, string> = {
    shared_buffers: `${sharedBuffersMb}MB`,
    maintenance_work_mem: '64MB',
  };
  // The library's own parameters first (single-user mode, no parallel workers): ours only add.
  return [...PGlite.defaultStartParams, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
}
