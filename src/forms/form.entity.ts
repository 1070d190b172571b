import { type Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Conversation } from '../conversations/conversation.entity.ts';
import { BaseEntity } from '../db/base.entity.ts';
import { GraphQLJSONObject } from '../graphql/json.ts';
import { Organization } from '../organizations/organization.entity.ts';

/**
 * A conversational form: a JSON Schema (draft 2020-12) whose properties are asked one at a
 * time. Readable and changeable by its organization only; its chat is public once published.
 */
@ObjectType()
@Entity({ tableName: 'forms' })
@Index({ properties: ['organization', 'id'] })
export class Form extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  /** `json`, not `jsonb`: jsonb reorders keys, and the order of `properties` is the order of the questions. */
  @Field(() => GraphQLJSONObject, { description: 'A JSON Schema (draft 2020-12) of type object; each property is one question, in order.' })
  @Property({ type: 'json', columnType: 'json' })
  schema!: Record<string, unknown>;

  @Field(() => String, { description: 'Said before the first question of every conversation.' })
  @Property({ type: 'text', default: '' })
  intro: string & Opt = '';

  @Field(() => String, { nullable: true, description: 'Completed submissions are POSTed here, signed with the webhook secret.' })
  @Property({ type: 'text', nullable: true })
  webhookUrl?: string | null;

  /** Signs webhook deliveries (HMAC-SHA256), so it is kept as is; never a GraphQL field. */
  @Property({ type: 'text' })
  webhookSecret!: string;

  @Field(() => Boolean, { description: 'Only published forms answer at POST /forms/{formId}/chat.' })
  @Property({ type: 'boolean', default: false })
  published: boolean & Opt = false;
}

export enum FormSubmissionStatus {
  in_progress = 'in_progress',
  completed = 'completed',
}
registerEnumType(FormSubmissionStatus, { name: 'FormSubmissionStatus' });

/** What one conversation collected for its form; one per conversation, updated every turn. */
@ObjectType()
@Entity({ tableName: 'form_submissions' })
@Index({ properties: ['form', 'id'] })
export class FormSubmission extends BaseEntity {
  @ManyToOne(() => Form, { deleteRule: 'cascade' })
  form!: Form;

  @Unique()
  @ManyToOne(() => Conversation, { deleteRule: 'cascade' })
  conversation!: Conversation;

  @Field(() => GraphQLJSONObject, { description: 'The valid values collected so far, by property name.' })
  @Property({ type: 'json', fieldName: 'values' })
  values: Record<string, unknown> & Opt = {};

  @Field(() => [String], { description: 'Optional properties the visitor chose to skip.' })
  @Property({ type: 'json' })
  skipped: string[] & Opt = [];

  @Field(() => String, { nullable: true, description: 'The property being asked; null once completed.' })
  @Property({ type: 'text', nullable: true })
  currentField?: string | null;

  @Field(() => FormSubmissionStatus)
  @Enum({ items: () => FormSubmissionStatus })
  status: FormSubmissionStatus & Opt = FormSubmissionStatus.in_progress;

  /** Bumped by every turn: two messages answered at once cannot overwrite each other. */
  @Property({ type: 'integer', default: 0 })
  turn: number & Opt = 0;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  completedAt?: Date | null;

  @Field(() => Int, { description: 'Webhook deliveries tried so far.' })
  @Property({ type: 'integer', default: 0 })
  webhookAttempts: number & Opt = 0;

  @Field(() => Date, { nullable: true, description: 'When the webhook answered 2xx.' })
  @Property({ type: 'datetime', nullable: true })
  webhookDeliveredAt?: Date | null;

  @Field(() => String, { nullable: true, description: 'Why the last delivery failed.' })
  @Property({ type: 'text', nullable: true })
  webhookError?: string | null;
}
