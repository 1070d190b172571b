import { Entity, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ObjectType } from 'type-graphql';
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

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  lastUsedAt?: Date | null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  revokedAt?: Date | null;
}
