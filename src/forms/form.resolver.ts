import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { Max, Min } from 'class-validator';
import type { Context } from '../graphql/context.ts';
import { alreadyValidated, validatedInput } from '../graphql/validate.ts';
import { Connection, PageArgs } from '../graphql/pagination.ts';
import { Form, FormSubmission, FormSubmissionStatus } from './form.entity.ts';
import { CreateFormInput, FormChatEvent, FormChatInput, FormChatResponse, FormWithSecret, UpdateFormInput } from './form.inputs.ts';

@ObjectType()
class FormConnection extends Connection(Form) {}

@ObjectType()
class FormSubmissionConnection extends Connection(FormSubmission) {}

@ArgsType()
class SubmissionPageArgs {
  @Field(() => Int, { defaultValue: 20, description: '1 to 100.' })
  @Min(1)
  @Max(100)
  first!: number;

  @Field(() => String, { nullable: true, description: 'endCursor of the previous page.' })
  after?: string | null;

  @Field(() => FormSubmissionStatus, { nullable: true, description: 'Only submissions in this status.' })
  status?: FormSubmissionStatus | null;
}

@Resolver(() => Form)
export class FormResolver {
  @Query(() => Form, { description: "A form of the caller's organization." })
  form(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Form> {
    return ctx.services.forms.get(ctx.em, ctx.auth, id);
  }

  @Query(() => FormConnection, { description: "The caller's organization's forms, newest first." })
  forms(@Args() { first, after }: PageArgs, @Ctx() ctx: Context): Promise<FormConnection> {
    return ctx.services.forms.list(ctx.em, ctx.auth, first, after);
  }

  @Query(() => FormSubmissionConnection, { description: 'Submissions of a form, newest first: one per conversation, completed or in progress.' })
  formSubmissions(@Arg('formId', () => ID) formId: string, @Args() { first, after, status }: SubmissionPageArgs, @Ctx() ctx: Context): Promise<FormSubmissionConnection> {
    return ctx.services.forms.submissions(ctx.em, ctx.auth, formId, first, after, status);
  }

  @Mutation(() => FormWithSecret, { description: 'The webhook secret is shown here once (and by rotateFormWebhookSecret).' })
  createForm(@Arg('input') input: CreateFormInput, @Ctx() ctx: Context): Promise<FormWithSecret> {
    return ctx.services.forms.create(ctx.em, ctx.auth, input);
  }

  @Mutation(() => Form)
  updateForm(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateFormInput, @Ctx() ctx: Context): Promise<Form> {
    return ctx.services.forms.update(ctx.em, ctx.auth, id, input);
  }

  @Mutation(() => Form, { description: 'Returns the deleted form; its conversations and submissions are deleted with it.' })
  deleteForm(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<Form> {
    return ctx.services.forms.delete(ctx.em, ctx.auth, id);
  }

  @Mutation(() => FormWithSecret, { description: 'A new webhook secret, shown once; the old one stops signing at once.' })
  rotateFormWebhookSecret(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<FormWithSecret> {
    return ctx.services.forms.rotateSecret(ctx.em, ctx.auth, id);
  }

  @Mutation(() => FormChatResponse, { description: 'The reply of a published form to a visitor. No credentials needed.' })
  formChat(@Arg('formId', () => ID) formId: string, @Arg('input') input: FormChatInput, @Ctx() ctx: Context): Promise<FormChatResponse> {
    return ctx.services.forms.reply(ctx.em, ctx.ip, formId, input);
  }

  @Subscription(() => FormChatEvent, {
    description: 'The reply as it is produced: `answer` events with text, one `metadata`, then `endpoint_response`.',
    subscribe: async ({ args, context }) => {
      const ctx = context as Context;
      // type-graphql does not validate the arguments of a custom subscribe: refuse bad input here.
      const input = validatedInput(FormChatInput, args.input);
      return (await ctx.services.forms.chat(ctx.em, ctx.ip, args.formId as string, input)).events;
    },
  })
  // The arguments were validated once in subscribe; not again for every event.
  formChatStream(@Root() event: FormChatEvent, @Arg('formId', () => ID) _formId: string, @Arg('input', { validateFn: alreadyValidated }) _input: FormChatInput): FormChatEvent {
    return event;
  }
}

@Resolver(() => FormSubmission)
export class FormSubmissionResolver {
  @FieldResolver(() => ID)
  formId(@Root() submission: FormSubmission): string {
    return submission.form.id;
  }

  @FieldResolver(() => ID, { description: 'Read it at GET /conversations/{id}.' })
  conversationId(@Root() submission: FormSubmission): string {
    return submission.conversation.id;
  }
}
