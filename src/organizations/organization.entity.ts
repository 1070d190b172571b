import { BigIntType, type Opt } from '@mikro-orm/core';
import { Entity, Property } from '@mikro-orm/decorators/legacy';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';

@ObjectType({ description: 'A tenant: owns users (through memberships), API keys, agents and datastores.' })
@Entity({ tableName: 'organizations' })
export class Organization extends BaseEntity {
  @Field()
  @Property({ type: 'text' })
  name!: string;

  /** Plan limits. */
  @Field(() => Float, { description: 'Most tokens the datastores of the organization may hold.' })
  @Property({ type: new BigIntType('number'), default: 10_000_000 })
  storedTokenLimit: number & Opt = 10_000_000;

  @Field(() => Int, { description: 'Most pages one web_site datasource may crawl.' })
  @Property({ type: 'integer', default: 25 })
  crawlPageLimit: number & Opt = 25;

  @Field(() => Float, { description: 'Agent answers per calendar month (UTC).' })
  @Property({ type: new BigIntType('number'), default: 10_000 })
  monthlyQueryLimit: number & Opt = 10_000;
}
