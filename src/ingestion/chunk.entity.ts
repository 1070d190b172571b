import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Datasource } from './datasource.entity.ts';
import { VectorType } from '../db/vector.type.ts';
import { newId } from '../ids.ts';

/**
 * A fragment of a datasource with its embedding. Written in bulk by SQL (see chunk.store.ts);
 * this class gives the schema. `datastore_id` and `custom_id` are copied from the datasource so
 * filters run inside the vector query.
 */
@Entity({ tableName: 'chunks' })
@Index({ properties: ['datasource', 'position'] })
export class Chunk {
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Datasource, { deleteRule: 'cascade' })
  datasource!: Datasource;

  @Index()
  @Property({ type: 'uuid' })
  datastoreId!: string;

  @Property({ type: 'text', nullable: true })
  customId?: string | null;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'integer', nullable: true })
  page?: number | null;

  @Property({ type: 'text' })
  text!: string;

  @Property({ type: 'text' })
  contentHash!: string;

  @Property({ type: VectorType, nullable: true })
  embedding?: number[] | null;

  @Property({ type: 'smallint' })
  dimension!: number;

  /** While the datastore's embedding model changes: the vector by the pending model (reembed.job.ts), swapped in when all are done. */
  @Property({ type: VectorType, nullable: true })
  embeddingNext?: number[] | null;

  @Property({ type: 'json' })
  metadata: Record<string, unknown> = {};
}
