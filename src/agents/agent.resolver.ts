import { visibleIds } from '../access.ts';
import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { Agent } from './agent.entity.ts';
import { CreateAgentInput, UpdateAgentInput } from './agent.inputs.ts';

@ObjectType()
class AgentConnection extends Connection(Agent) {}

@Resolver(() => Agent)
export class AgentResolver {
  @Query(() => Agent, { description: 'By id or "@handle". Public agents are readable without credentials.' })
  agent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Agent> {
    return ctx.services.agents.get(ctx.em, ctx.auth, id, ctx.origin);
  }

  @Query(() => AgentConnection, { description: "The caller's organization's agents, newest first." })
  agents(@Args() { first, after }: PageArgs, @Ctx() ctx: Context): Promise<AgentConnection> {
    return ctx.services.agents.list(ctx.em, ctx.auth, first, after);
  }

  @Mutation(() => Agent)
  createAgent(@Arg('input') input: CreateAgentInput, @Ctx() ctx: Context): Promise<Agent> {
    return ctx.services.agents.create(ctx.em, ctx.auth, input);
  }

  @Mutation(() => Agent)
  updateAgent(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateAgentInput, @Ctx() ctx: Context): Promise<Agent> {
    return ctx.services.agents.update(ctx.em, ctx.auth, id, input);
  }

  @Mutation(() => Agent, { description: 'Returns the deleted agent.' })
  deleteAgent(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Agent> {
    return ctx.services.agents.delete(ctx.em, ctx.auth, id);
  }

  @Authorized()
  @FieldResolver(() => [ID], { description: 'Datastores the agent answers from (its organization only).' })
  async datastoreIds(@Root() agent: Agent, @Ctx() ctx: Context): Promise<string[]> {
    // A key limited to some datastores is not told the ids of the others.
    return visibleIds(ctx.auth, 'Datastore', await ctx.services.agents.datastoreIds(ctx.em, agent));
  }
}
