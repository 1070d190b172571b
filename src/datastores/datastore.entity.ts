import { ArrayType, type Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Authorized, Field, Int, ObjectType } from 'type-graphql';
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

  @Field({ description: 'Embedding model recorded at creation; every chunk of this datastore is embedded with it.' })
  @Property({ type: 'text' })
  embeddingModel!: string;

  @Field(() => Int)
  @Property({ type: 'integer' })
  embeddingDimension!: number;

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
