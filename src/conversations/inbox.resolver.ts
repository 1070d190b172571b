import { Args, ArgsType, Ctx, Field, FieldResolver, ID, InputType, Int, ObjectType, Query, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { Conversation } from './conversation.entity.ts';
import { conversationStats, listConversations } from './inbox.ts';

@ObjectType()
class ConversationConnection extends Connection(Conversation) {}

@InputType({ description: 'Every field is optional; given ones must all hold.' })
class ConversationFilter {
  @Field(() => ID, { nullable: true, description: 'Only this agent\'s conversations.' })
  agentId?: string | null;

  @Field(() => String, { nullable: true, description: 'Only this visitor\'s (exact visitor id).' })
  visitorId?: string | null;

  @Field(() => Date, { nullable: true, description: 'Started at or after this time.' })
  from?: Date | null;

  @Field(() => Date, { nullable: true, description: 'Started at or before this time.' })
  to?: Date | null;
}

@ArgsType()
class ConversationListArgs extends PageArgs {
  @Field(() => ConversationFilter, { nullable: true })
  filter?: ConversationFilter | null;
}

/** The inbox: the organization's conversations (src/conversations/inbox.ts). */
@Resolver(() => Conversation)
export class ConversationInboxResolver {
  @Query(() => ConversationConnection, {
    description: "The caller's organization's conversations, newest first (a key limited to some agents: theirs only).",
  })
  conversations(@Args() { filter, first, after }: ConversationListArgs, @Ctx() ctx: Context): Promise<ConversationConnection> {
    return listConversations(ctx.em, ctx.auth, filter ?? {}, first, after);
  }

  @FieldResolver(() => Int, { description: 'Messages in the conversation, questions and answers.' })
  async messageCount(@Root() conversation: Conversation, @Ctx() ctx: Context): Promise<number> {
    return (await conversationStats(ctx.em, conversation)).messageCount;
  }

  @FieldResolver(() => Date, { description: 'The time of its newest message.' })
  async updatedAt(@Root() conversation: Conversation, @Ctx() ctx: Context): Promise<Date> {
    return (await conversationStats(ctx.em, conversation)).updatedAt;
  }
}
