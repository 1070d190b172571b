import { Entity, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ObjectType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';

@ObjectType()
@Entity({ tableName: 'users' })
export class User extends BaseEntity {
  /** Stored lower-cased; unique across the service. */
  @Field()
  @Unique()
  @Property({ type: 'text' })
  email!: string;

  /** scrypt$N$r$p$salt$hash */
  @Property({ type: 'text', hidden: true, lazy: true })
  passwordHash!: string;
}
