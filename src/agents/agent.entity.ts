import { ArrayType, Collection, type Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToMany, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Authorized, Field, Float, ObjectType } from 'type-graphql';
import { BaseEntity } from '../db/base.entity.ts';
import { Datastore } from '../datastores/datastore.entity.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { ModelName, PromptType, Visibility } from '../vocabulary.ts';

/**
 * Fields marked @Authorized() are readable only by the agent's own organization: anyone may
 * read a public agent's name and description, nobody outside may read its prompts.
 */
@ObjectType()
@Entity({ tableName: 'agents' })
@Index({ properties: ['organization', 'id'] })
export class Agent extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => String, { nullable: true, description: 'Unique name; address the agent as "@handle".' })
  @Unique()
  @Property({ type: 'text', nullable: true })
  handle?: string | null;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field()
  @Property({ type: 'text', default: '' })
  description: string = '';

  @Authorized()
  @Field(() => ModelName)
  @Enum({ items: () => ModelName })
  modelName: ModelName = ModelName.model_3_5_turbo;

  @Authorized()
  @Field(() => Float)
  @Property({ type: 'double' })
  temperature: number = 0;

  @Field(() => Visibility)
  @Enum({ items: () => Visibility })
  visibility: Visibility = Visibility.private;

  @Authorized()
  @Field()
  @Property({ type: 'text', default: '' })
  systemPrompt: string = '';

  @Authorized()
  @Field()
  @Property({ type: 'text', default: '' })
  userPrompt: string = '';

  @Authorized()
  @Field(() => PromptType, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  @Enum({ items: () => PromptType, nullable: true })
  promptType?: PromptType | null;

  @Authorized()
  @Field(() => String, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  @Property({ type: 'text', nullable: true })
  promptTemplate?: string | null;

  @Authorized()
  @Field(() => [String], { description: 'Origins (scheme://host[:port]) whose web pages may call this agent; empty = any. Binds anonymous callers and other organizations; the owning organization is not bound (docs/browser.md).' })
  @Property({ type: ArrayType, defaultRaw: "'{}'" })
  allowedOrigins: string[] & Opt = [];

  @ManyToMany(() => Datastore, undefined, { pivotTable: 'agent_datastores', owner: true })
  datastores = new Collection<Datastore>(this);
}
