import { Entity, Enum, ManyToOne, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { User } from './user.entity.ts';

export enum MemberRole {
  owner = 'owner',
  admin = 'admin',
  member = 'member',
}
registerEnumType(MemberRole, { name: 'MemberRole' });

@ObjectType()
@Entity({ tableName: 'memberships' })
@Unique({ properties: ['user', 'organization'] })
export class Membership extends BaseEntity {
  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Field(() => Organization)
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => MemberRole)
  @Enum({ items: () => MemberRole })
  role: MemberRole = MemberRole.member;
}
