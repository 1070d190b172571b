/**
 * Vectors sent to the database as integers: round(x * 2^30) in an int4[] literal, turned back into
 * the vector by `vectorFromInts`. Parsing decimal floats (float4in/strtof) is the slow part of
 * reading a vector's text in the WebAssembly build of PostgreSQL: ~0.6-0.9 ms per 384 values in
 * PGlite, a large share of a chunk's insert, where integers take ~0.1 ms (bench:ingest,
 * docs/benchmarks.md). Native PostgreSQL reads either quickly.
 *
 * Exact for unit vectors: every float32 of magnitude >= 2^-7 is a whole multiple of 2^-30 with at
 * most 24 significant bits, so it survives int4 -> float4 and the power-of-two scale unchanged;
 * smaller values are kept to within 2^-31 (about 5e-10). Embeddings reach here with unit length
 * (providers/embeddings.ts), so |x| <= 1 and x * 2^30 fits an int4.
 */
const SCALE_BITS = 30;
const SCALE = 2 ** SCALE_BITS;

/** The int4[] literal of a vector of values in [-1, 1]. */
export function vectorIntsLiteral(vector: number[]): string {
  let out = '{';
  for (let i = 0; i < vector.length; i++) out += (i ? ',' : '') + Math.round(Math.fround(vector[i]!) * SCALE);
  return `${out}}`;
}

/** pgvector's text form of the vector that multiplies the integers back into place (2^-30 in each of `dimension` places). */
export function vectorIntsScale(dimension: number): string {
  return `[${new Array<string>(dimension).fill(String(2 ** -SCALE_BITS)).join(',')}]`;
}

/** SQL: the vector from `ints` (an int4[] expression) and `scale` (a parameter holding vectorIntsScale). */
export function vectorFromInts(ints: string, scale: string): string {
  return `((${ints})::vector * ${scale}::vector)`;
}
