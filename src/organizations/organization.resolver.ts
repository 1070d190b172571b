import { Arg, Args, Ctx, Field, FieldResolver, Float, ID, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { MemberRole } from '../auth/membership.entity.ts';
import type { Context } from '../graphql/context.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { Organization } from './organization.entity.ts';
import type { OrganizationMember, OrganizationUsage } from './organization.service.ts';

@ObjectType({ description: 'What a signed-out page may know of the service.' })
class ServiceInfo {
  @Field({ description: 'Whether `signUp` is open (SIGNUP_ENABLED).' })
  signupEnabled!: boolean;
}

@ObjectType({ description: "The organization's usage now, beside its plan limits (storedTokenLimit, monthlyQueryLimit)." })
class Usage implements OrganizationUsage {
  @Field({ description: 'The month (UTC, YYYY-MM) queriesThisMonth counts.' })
  period!: string;

  @Field(() => Float, { description: 'Answers (and model calls of forms and the universal processor) this month, against monthlyQueryLimit.' })
  queriesThisMonth!: number;

  @Field(() => Float, { description: 'Tokens its datasources store, against storedTokenLimit.' })
  storedTokens!: number;
}

@ObjectType({ description: 'A user of the organization.' })
class Member implements OrganizationMember {
  @Field(() => ID, { description: 'The membership.' })
  id!: string;

  @Field()
  email!: string;

  @Field(() => MemberRole)
  role!: MemberRole;

  @Field(() => Date)
  joinedAt!: Date;
}

@ObjectType()
class MemberConnection extends Connection(Member) {}

@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => ServiceInfo, { description: 'Open to anyone, signed in or not.' })
  serviceInfo(@Ctx() ctx: Context): ServiceInfo {
    return ctx.services.organizations.serviceInfo();
  }

  @Query(() => MemberConnection, { description: "The signed-in user's organization's members, oldest first (sessions only)." })
  members(@Args() { first, after }: PageArgs, @Ctx() ctx: Context): Promise<MemberConnection> {
    return ctx.services.organizations.members(ctx.em, ctx.auth, first, after);
  }

  @Mutation(() => Organization, { description: "Renames the signed-in user's organization (owners and admins)." })
  updateOrganization(@Arg('name') name: string, @Ctx() ctx: Context): Promise<Organization> {
    return ctx.services.organizations.rename(ctx.em, ctx.auth, name);
  }

  @FieldResolver(() => Usage, {
    nullable: true,
    description: 'Usage now, for its own members; null for anyone else (also in the signUp and login payloads, whose caller is not signed in yet).',
  })
  usage(@Root() organization: Organization, @Ctx() ctx: Context): Promise<Usage | null> {
    return ctx.services.organizations.usage(ctx.em, ctx.auth, organization);
  }
}
