import { IsEmail, Length, MaxLength } from 'class-validator';
import { Arg, Args, ArgsType, Ctx, Field, ID, InputType, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { ApiKey } from './api-key.entity.ts';
import { MemberRole } from './membership.entity.ts';
import { User } from './user.entity.ts';
import type { SignedIn } from './auth.service.ts';
import { SCOPE_LIST_MAX } from './key-scope.ts';
import { isTls } from '../http/security-headers.ts';

export const SESSION_COOKIE = 'ab_session';

@InputType()
class SignUpInput {
  @Field()
  @IsEmail()
  @MaxLength(254)
  email!: string;

  @Field()
  @Length(8, 200)
  password!: string;

  @Field()
  @Length(1, 200)
  organizationName!: string;
}

@InputType()
class LoginInput {
  @Field()
  @MaxLength(254)
  email!: string;

  @Field()
  @MaxLength(200)
  password!: string;
}

@InputType({ description: 'A key limited to some agents or datastores, read-only or expiring; every limit is optional (see docs/keys.md).' })
class CreateApiKeyInput {
  @Field()
  @Length(1, 100)
  name!: string;

  @Field(() => [ID], { nullable: true, description: `Agents of the organization the key is limited to (at most ${SCOPE_LIST_MAX}); omitted: all of them, including later ones.` })
  agentIds?: string[] | null;

  @Field(() => [ID], { nullable: true, description: `Datastores of the organization the key is limited to (at most ${SCOPE_LIST_MAX}); omitted: all of them, including later ones.` })
  datastoreIds?: string[] | null;

  @Field(() => Boolean, { nullable: true, description: 'Queries, reads and conversations only. Default false.' })
  readOnly?: boolean | null;

  @Field(() => Date, { nullable: true, description: 'Must lie in the future; after it the key is refused (401). Omitted: never expires.' })
  expiresAt?: Date | null;
}

@ObjectType({ description: 'A new session. The token is shown once; browsers also get it as an httpOnly cookie.' })
class AuthPayload {
  @Field()
  token!: string;

  @Field(() => Date)
  expiresAt!: Date;

  @Field(() => User)
  user!: User;

  @Field(() => Organization)
  organization!: Organization;
}

@ObjectType()
class Me {
  @Field(() => User, { nullable: true, description: 'Null when calling with an API key.' })
  user!: User | null;

  @Field(() => Organization)
  organization!: Organization;

  @Field(() => MemberRole, { nullable: true })
  role!: MemberRole | null;

  @Field({ description: '"session" or "apiKey".' })
  via!: string;
}

@ObjectType({ description: 'A new API key. `key` is shown only here, once; only its hash is stored.' })
class CreatedApiKey {
  @Field(() => ID)
  id!: string;

  @Field()
  key!: string;

  @Field(() => ApiKey)
  apiKey!: ApiKey;
}

@ArgsType()
class IdArgs {
  @Field(() => ID)
  id!: string;
}

@Resolver()
export class AuthResolver {
  @Mutation(() => AuthPayload, { description: 'Creates an organization and its owner, and signs in. Closed when SIGNUP_ENABLED=false.' })
  async signUp(@Arg('input') input: SignUpInput, @Ctx() ctx: Context): Promise<AuthPayload> {
    return withCookie(ctx, await ctx.services.auth.signUp(ctx.em, input, ctx.ip, ctx.auth));
  }

  @Mutation(() => AuthPayload)
  async login(@Arg('input') input: LoginInput, @Ctx() ctx: Context): Promise<AuthPayload> {
    return withCookie(ctx, await ctx.services.auth.login(ctx.em, input, ctx.ip, ctx.auth));
  }

  @Mutation(() => Boolean, { description: 'Revokes the current session and clears the cookie.' })
  async logout(@Ctx() ctx: Context): Promise<boolean> {
    const done = await ctx.services.auth.logout(ctx.em, ctx.auth);
    ctx.res?.clearCookie(SESSION_COOKIE, cookieOptions(ctx));
    return done;
  }

  @Query(() => Me)
  me(@Ctx() ctx: Context): Promise<Me> {
    return ctx.services.auth.me(ctx.em, ctx.auth);
  }

  @Mutation(() => CreatedApiKey, { description: 'Owners and admins, signed in. The key is returned once; its limits cannot be changed later (create another key).' })
  async createApiKey(@Arg('input') input: CreateApiKeyInput, @Ctx() ctx: Context): Promise<CreatedApiKey> {
    const { apiKey, key } = await ctx.services.auth.createApiKey(ctx.em, ctx.auth, input);
    return { id: apiKey.id, key, apiKey };
  }

  @Query(() => [ApiKey])
  apiKeys(@Ctx() ctx: Context): Promise<ApiKey[]> {
    return ctx.services.auth.listApiKeys(ctx.em, ctx.auth);
  }

  @Mutation(() => ApiKey, { description: 'Revoked keys stop working at once.' })
  revokeApiKey(@Args() { id }: IdArgs, @Ctx() ctx: Context): Promise<ApiKey> {
    return ctx.services.auth.revokeApiKey(ctx.em, ctx.auth, id);
  }
}

function withCookie(ctx: Context, signedIn: SignedIn): AuthPayload {
  ctx.res?.cookie(SESSION_COOKIE, signedIn.token, { ...cookieOptions(ctx), expires: signedIn.expiresAt });
  return signedIn;
}

/** Out of reach of scripts, not sent by other sites' subrequests, and Secure whenever TLS is in use. */
function cookieOptions(ctx: Context) {
  const { cookieSecure, trustProxyProto } = ctx.services.config;
  const secure = cookieSecure || (ctx.res?.req ? isTls(ctx.res.req, trustProxyProto) : false);
  return { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' };
}
