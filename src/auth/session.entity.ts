import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../db/base.entity.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { User } from './user.entity.ts';

/** A signed-in user. Only the SHA-256 of the token is stored; the token is shown once. */
@Entity({ tableName: 'sessions' })
export class Session extends BaseEntity {
  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Unique()
  @Property({ type: 'text', hidden: true })
  tokenHash!: string;

  @Index()
  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'datetime', nullable: true })
  revokedAt?: Date | null;
}
