import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { UniversalInput, UniversalResult } from './universal.inputs.ts';

@Resolver()
export class UniversalResolver {
  @Mutation(() => UniversalResult, {
    description: "Text, facts and an answer from an image, audio, video or document. The agent's read rule applies (public agents: anyone).",
  })
  universalProcess(@Arg('agentId', () => ID) agentId: string, @Arg('input') input: UniversalInput, @Ctx() ctx: Context): Promise<UniversalResult> {
    return ctx.services.universal.process(ctx.em, ctx.auth, agentId, input, { ip: ctx.ip, origin: ctx.origin });
  }
}
