import type { PGlite } from '@electric-sql/pglite';

/**
 * Bytes of the embedded database's WebAssembly memory: Postgres's own heap, shared_buffers and
 * stack, all of it resident once touched. A WebAssembly memory grows when Postgres asks for more
 * and never shrinks, so this is the high-water mark of the database's use since the process
 * started (docs/operations.md#memory). PGlite keeps its module out of its typed surface.
 */
export function embeddedMemoryBytes(pglite: PGlite): number {
  const mod = (pglite as unknown as { mod?: { wasmMemory?: { buffer: ArrayBuffer } } }).mod;
  return mod?.wasmMemory?.buffer.byteLength ?? 0;
}
