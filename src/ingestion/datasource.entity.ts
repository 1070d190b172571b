import { BigIntType, type Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from '../graphql/json.ts';
import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { nextResyncAt } from './resync-schedule.ts';

export enum DatasourceType {
  file = 'file',
  web_page = 'web_page',
  web_site = 'web_site',
  text = 'text',
}
registerEnumType(DatasourceType, {
  name: 'DatasourceType',
  description: 'file, web_page and web_site as in the REST interface; text for raw text documents.',
});

/** unsynched -> running -> synched | error; pending when re-processing is asked for. */
export enum DatasourceStatus {
  unsynched = 'unsynched',
  pending = 'pending',
  running = 'running',
  synched = 'synched',
  error = 'error',
  usage_limit_reached = 'usage_limit_reached',
}
registerEnumType(DatasourceStatus, { name: 'DatasourceStatus' });

@ObjectType({ description: 'A document of a datastore: a file, a web page, a web site or a raw text.' })
@Entity({ tableName: 'datasources' })
@Index({ properties: ['datastore', 'id'] })
@Index({ properties: ['groupId'] })
export class Datasource extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Datastore, { deleteRule: 'cascade' })
  datastore!: Datastore;

  @Field(() => DatasourceType)
  @Enum({ items: () => DatasourceType })
  type!: DatasourceType;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => DatasourceStatus)
  @Enum({ items: () => DatasourceStatus })
  status: DatasourceStatus & Opt = DatasourceStatus.unsynched;

  @Field(() => ID, { nullable: true, description: 'For a page found by a web_site datasource: that site datasource.' })
  @Property({ type: 'uuid', nullable: true })
  groupId?: string | null;

  @Field(() => GraphQLJSONObject, { description: 'web_page: source_url; web_site: sitemap or source_url.' })
  @Property({ type: 'json' })
  config: Record<string, unknown> & Opt = {};

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  customId?: string | null;

  @Field(() => GraphQLJSONObject, { description: 'Free keys given with a text document.' })
  @Property({ type: 'json' })
  metadata: Record<string, unknown> & Opt = {};

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  mimeType?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  fileName?: string | null;

  /** Object storage key of the uploaded file. */
  @Property({ type: 'text', nullable: true })
  storageKey?: string | null;

  /** The text of a raw text document. */
  @Property({ type: 'text', nullable: true, lazy: true })
  content?: string | null;

  @Field(() => Float, { nullable: true, description: 'Bytes of the file or text.' })
  @Property({ type: new BigIntType('number'), nullable: true })
  size?: number | null;

  /** SHA-256 of the last processed content, to tell whether a re-sync changed anything. */
  @Property({ type: 'text', nullable: true })
  hash?: string | null;

  @Field(() => Int)
  @Property({ type: 'integer', default: 0 })
  chunkCount: number & Opt = 0;

  @Field(() => Int, { description: 'Estimated tokens stored (about 4 characters each).' })
  @Property({ type: 'integer', default: 0 })
  tokenCount: number & Opt = 0;

  @Field(() => String, { nullable: true, description: 'Why processing failed, in words.' })
  @Property({ type: 'text', nullable: true })
  errorMessage?: string | null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  lastSynch?: Date | null;

  @Field(() => String, { description: 'web_page and web_site: when to fetch again, none (default), daily, weekly or a five-field cron expression (UTC). A page of a site follows its site.' })
  @Property({ type: 'text', default: 'none' })
  resyncSchedule: string & Opt = 'none';

  @Field(() => Date, { nullable: true, description: "When resyncSchedule next fires (its datastore's schedule may come sooner); null for none." })
  get nextSynchAt(): Date | null {
    return nextResyncAt(this.resyncSchedule, this.id);
  }

  /** The validators the page's server sent with the content the chunks hold, for conditional requests. */
  @Property({ type: 'text', nullable: true })
  etag?: string | null;

  @Property({ type: 'text', nullable: true })
  lastModified?: string | null;

  /** The embedding model and chunk settings the chunks were made with: unchanged text is skipped only if these are the same too. */
  @Property({ type: 'text', nullable: true })
  chunkedWith?: string | null;
}
