import { Entity, Property } from '@mikro-orm/decorators/legacy';
import { Field, ObjectType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';

@ObjectType({ description: 'A tenant: owns users (through memberships), API keys, agents and datastores.' })
@Entity({ tableName: 'organizations' })
export class Organization extends BaseEntity {
  @Field()
  @Property({ type: 'text' })
  name!: string;
}
