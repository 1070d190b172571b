import { Arg, Ctx, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { alreadyValidated, validatedInput } from '../graphql/validate.ts';
import { AgentAnswer, AgentQueryInput, AnswerEvent, DatastoreQueryInput, QueryResult } from './answer.inputs.ts';

@Resolver()
export class AnswerResolver {
  @Query(() => [QueryResult], { description: 'The fragments most similar to the query, best first. Public datastores answer without credentials.' })
  datastoreQuery(@Arg('id', () => ID) id: string, @Arg('input') input: DatastoreQueryInput, @Ctx() ctx: Context): Promise<QueryResult[]> {
    return ctx.services.retrieval.query(ctx.em, ctx.auth, ctx.ip, id, input, ctx.origin);
  }

  @Mutation(() => AgentAnswer, { description: 'The complete answer of an agent. Public agents answer anonymous visitors.' })
  agentQuery(@Arg('id', () => ID) id: string, @Arg('input') input: AgentQueryInput, @Ctx() ctx: Context): Promise<AgentAnswer> {
    return ctx.services.answers.answer(ctx.em, ctx.auth, ctx.ip, id, input, { origin: ctx.origin });
  }

  @Subscription(() => AnswerEvent, {
    description: 'The answer as it is produced: `answer` events with text, then `endpoint_response`.',
    subscribe: async ({ args, context }) => {
      const ctx = context as Context;
      // type-graphql does not validate the arguments of a custom subscribe: refuse bad input
      // here, before a query is reserved or a conversation made (400 before a REST stream).
      const input = validatedInput(AgentQueryInput, args.input);
      return (await ctx.services.answers.ask(ctx.em, ctx.auth, ctx.ip, args.id as string, input, { origin: ctx.origin })).events;
    },
  })
  // The arguments were validated once in subscribe; not again for every event.
  agentQueryStream(@Root() event: AnswerEvent, @Arg('id', () => ID) _id: string, @Arg('input', { validateFn: alreadyValidated }) _input: AgentQueryInput): AnswerEvent {
    return event;
  }
}
