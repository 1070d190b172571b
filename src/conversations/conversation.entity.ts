import { randomUUID } from 'node:crypto';
import { type Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { Agent } from '../agents/agent.entity.ts';
import { Organization } from '../organizations/organization.entity.ts';

/**
 * A conversation with an agent (or a form). Its id is the anonymous visitor's access token,
 * so it is a random UUID (122 random bits), not a time-ordered one.
 */
@ObjectType()
@Entity({ tableName: 'conversations' })
@Index({ properties: ['agent', 'visitorId'] })
@Index({ properties: ['organization', 'createdAt', 'id'] })
export class Conversation {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Agent, { nullable: true, deleteRule: 'cascade' })
  agent?: Agent | null;

  /** Set for conversations with a form (forms issue). */
  @Property({ type: 'uuid', nullable: true })
  formId?: string | null;

  @Field()
  @Property({ type: 'text' })
  visitorId!: string;

  @Field(() => String, { description: 'api, widget, form…' })
  @Property({ type: 'text', default: 'api' })
  channel: string & Opt = 'api';

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();
}
