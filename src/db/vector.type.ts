import { Type } from '@mikro-orm/core';
import pgvector from 'pgvector';

/**
 * A pgvector `vector` column without a fixed dimension: each datastore records its own
 * embedding dimension, and HNSW indexes are per dimension (partial expression indexes).
 */
export class VectorType extends Type<number[] | null, string | null> {
  override convertToDatabaseValue(value: number[] | null): string | null {
    return value ? pgvector.toSql(value) : null;
  }

  override convertToJSValue(value: string | null): number[] | null {
    return value == null ? null : (pgvector.fromSql(value) as number[]);
  }

  override getColumnType(): string {
    return 'vector';
  }
}
