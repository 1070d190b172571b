import { ArrayType, type Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Authorized, Field, Float, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { Visibility } from '../vocabulary.ts';
import { nextResyncAt } from '../ingestion/resync-schedule.ts';

@ObjectType({ description: 'A collection of datasources whose chunks agents retrieve from.' })
@Entity({ tableName: 'datastores' })
@Index({ properties: ['organization', 'id'] })
export class Datastore extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field()
  @Property({ type: 'text', default: '' })
  description: string = '';

  @Field(() => Visibility)
  @Enum({ items: () => Visibility })
  visibility: Visibility = Visibility.private;

  @Field({ description: 'Embedding model of the vectors in use (`provider/model`): set at creation, changed by updateDatastore(embeddingModel) once every chunk is re-embedded.' })
  @Property({ type: 'text' })
  embeddingModel!: string;

  @Field(() => Int, { description: 'Dimension of the vectors in use (those queries search).' })
  @Property({ type: 'integer' })
  embeddingDimension!: number;

  @Field(() => String, { nullable: true, description: 'While the embedding model is being changed: the model the chunks are being re-embedded with (queries keep using embeddingModel until all are done).' })
  @Property({ type: 'text', nullable: true })
  pendingEmbeddingModel: (string & Opt) | null = null;

  @Field(() => Int, { nullable: true, description: 'Dimension of pendingEmbeddingModel\'s vectors.' })
  @Property({ type: 'integer', nullable: true })
  pendingEmbeddingDimension: (number & Opt) | null = null;

  @Field(() => Float, { nullable: true, description: 'Share of the chunks re-embedded with pendingEmbeddingModel, 0 to 1; null when no change is under way.' })
  @Property({ type: 'double', nullable: true })
  reembedProgress: (number & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'Why the last change of embedding model failed (the old model stayed in use); cleared by the next change.' })
  @Property({ type: 'text', nullable: true })
  reembedError: (string & Opt) | null = null;

  @Field(() => Int, { description: 'Characters per chunk when splitting documents.' })
  @Property({ type: 'integer', default: 1000 })
  chunkSize: number & Opt = 1000;

  @Field(() => Int, { description: 'Characters shared by neighbouring chunks.' })
  @Property({ type: 'integer', default: 200 })
  chunkOverlap: number & Opt = 200;

  @Authorized()
  @Field(() => [String], { description: 'Origins (scheme://host[:port]) whose web pages may query or write to this datastore; empty = any. Binds anonymous callers and other organizations; the owning organization is not bound (docs/browser.md).' })
  @Property({ type: ArrayType, defaultRaw: "'{}'" })
  allowedOrigins: string[] & Opt = [];

  @Field(() => String, { description: 'When to fetch all its web_page and web_site datasources again: none (default), daily, weekly or a five-field cron expression (UTC).' })
  @Property({ type: 'text', default: 'none' })
  resyncSchedule: string & Opt = 'none';

  @Field(() => Date, { nullable: true, description: 'When resyncSchedule last started a re-sync of its web datasources.' })
  @Property({ type: 'datetime', nullable: true })
  lastSynch?: Date | null;

  @Field(() => Date, { nullable: true, description: 'When resyncSchedule next fires; null for none.' })
  get nextSynchAt(): Date | null {
    return nextResyncAt(this.resyncSchedule, this.id);
  }
}
