import { Max, Min } from 'class-validator';
import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Int, ObjectType, Query, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Connection } from '../graphql/pagination.ts';
import { Conversation } from './conversation.entity.ts';
import { Message } from './message.entity.ts';

@ObjectType()
class MessageConnection extends Connection(Message) {}

@ArgsType()
class MessagePageArgs {
  @Field(() => Int, { defaultValue: 50, description: '1 to 100.' })
  @Min(1)
  @Max(100)
  first!: number;

  @Field(() => String, { nullable: true, description: 'The id of the last message already received: earlier ones follow.' })
  after?: string | null;
}

@Resolver(() => Conversation)
export class ConversationResolver {
  @Query(() => Conversation, { description: 'The conversation id is the credential: no other is needed.' })
  conversation(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Conversation> {
    return ctx.services.conversations.get(ctx.em, id);
  }

  @FieldResolver(() => ID, { nullable: true })
  agentId(@Root() conversation: Conversation): string | null {
    return conversation.agent?.id ?? null;
  }

  @FieldResolver(() => ID, { nullable: true })
  formId(@Root() conversation: Conversation): string | null {
    return conversation.formId ?? null;
  }

  @FieldResolver(() => MessageConnection, { description: 'Newest first.' })
  messages(@Root() conversation: Conversation, @Args() { first, after }: MessagePageArgs, @Ctx() ctx: Context): Promise<MessageConnection> {
    return ctx.services.conversations.messages(ctx.em, conversation, first, after);
  }
}
