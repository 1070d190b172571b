import { Type } from '@mikro-orm/core';
import pgvector from 'pgvector';

/**
 * pgvector's text form of a vector (queries, chunks, the ORM column). pgvector keeps 4-byte floats: each value is rounded to
 * one (Math.fround) and written with 9 significant digits, which reads back as exactly that
 * float. Same vector as the 17-digit form of the double, about 4x faster to write (and to parse).
 */
export function vectorLiteral(vector: number[]): string {
  let out = '[';
  for (let i = 0; i < vector.length; i++) out += (i ? ',' : '') + Math.fround(vector[i]!).toPrecision(9);
  return `${out}]`;
}

/**
 * A pgvector `vector` column without a fixed dimension: each datastore records its own
 * embedding dimension, and HNSW indexes are per dimension (partial expression indexes).
 */
export class VectorType extends Type<number[] | null, string | null> {
  override convertToDatabaseValue(value: number[] | null): string | null {
    return value ? vectorLiteral(value) : null;
  }

  override convertToJSValue(value: string | null): number[] | null {
    return value == null ? null : (pgvector.fromSql(value) as number[]);
  }

  override getColumnType(): string {
    return 'vector';
  }
}
