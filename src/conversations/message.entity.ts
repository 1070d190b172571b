import { type Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSONObject } from '../graphql/json.ts';
import { newId } from '../ids.ts';
import { Conversation } from './conversation.entity.ts';

export enum MessageFrom {
  human = 'human',
  agent = 'agent',
}
registerEnumType(MessageFrom, { name: 'MessageFrom' });

/** Ids are UUIDv7: they sort by time, so a message id is also a pagination cursor. */
@ObjectType()
@Entity({ tableName: 'messages' })
@Index({ properties: ['conversation', 'id'] })
export class Message {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Conversation, { deleteRule: 'cascade' })
  conversation!: Conversation;

  @Field(() => MessageFrom)
  @Enum({ items: () => MessageFrom })
  from!: MessageFrom;

  @Field()
  @Property({ type: 'text' })
  text!: string;

  @Field(() => [GraphQLJSONObject], { description: 'The fragments an answer was built from.' })
  @Property({ type: 'json' })
  sources: Record<string, unknown>[] & Opt = [];

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Token usage reported by the model.' })
  @Property({ type: 'json', nullable: true })
  usage?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject)
  @Property({ type: 'json' })
  metadata: Record<string, unknown> & Opt = {};

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();
}
