import type { Opt } from '@mikro-orm/core';
import { Entity, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { User } from './user.entity.ts';

/** An organization's API key. Only its SHA-256 is stored; `prefix` lets people tell keys apart. */
@ObjectType()
@Entity({ tableName: 'api_keys' })
export class ApiKey extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => User, { nullable: true, deleteRule: 'set null' })
  createdBy?: User | null;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field({ description: 'The first characters of the key, to recognise it; the key itself is shown once.' })
  @Property({ type: 'text' })
  prefix!: string;

  @Unique()
  @Property({ type: 'text', hidden: true })
  keyHash!: string;

  @Field(() => [ID], { nullable: true, description: 'The only agents the key reaches; null: every agent of the organization. Fixed at creation.' })
  @Property({ type: 'json', nullable: true })
  agentIds?: string[] | null;

  @Field(() => [ID], { nullable: true, description: 'The only datastores the key reaches; null: every datastore of the organization. Fixed at creation.' })
  @Property({ type: 'json', nullable: true })
  datastoreIds?: string[] | null;

  @Field(() => Boolean, { description: 'Queries, reads and conversations only: any change, upload or key management is FORBIDDEN.' })
  @Property({ type: 'boolean', default: false })
  readOnly: boolean & Opt = false;

  @Field(() => Date, { nullable: true, description: 'After this the key is refused (401); null: never.' })
  @Property({ type: 'datetime', nullable: true })
  expiresAt?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Updated at most once a minute.' })
  @Property({ type: 'datetime', nullable: true })
  lastUsedAt?: Date | null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  revokedAt?: Date | null;
}
