import { IsOptional, Length, MaxLength } from 'class-validator';
import { Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSONObject } from '../graphql/json.ts';
import { Form, FormSubmissionStatus } from './form.entity.ts';

const INTRO_MAX = 5_000;
const URL_MAX = 2_000;

@InputType()
export class CreateFormInput {
  @Field()
  @Length(1, 200)
  name!: string;

  @Field(() => GraphQLJSONObject, { description: 'JSON Schema draft 2020-12: type object, properties (one question each), required.' })
  schema!: Record<string, unknown>;

  @Field({ nullable: true, defaultValue: '' })
  @MaxLength(INTRO_MAX)
  intro!: string;

  @Field(() => String, { nullable: true, description: 'http(s) address that receives completed submissions.' })
  @IsOptional()
  @MaxLength(URL_MAX)
  webhookUrl?: string | null;

  @Field({ nullable: true, defaultValue: false, description: 'Default false: the chat answers 404 until the form is published.' })
  published!: boolean;
}

/** Only the fields given change; webhookUrl: null removes the webhook. */
@InputType()
export class UpdateFormInput {
  @Field({ nullable: true })
  @IsOptional()
  @Length(1, 200)
  name?: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  schema?: Record<string, unknown>;

  @Field({ nullable: true })
  @IsOptional()
  @MaxLength(INTRO_MAX)
  intro?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(URL_MAX)
  webhookUrl?: string | null;

  @Field({ nullable: true })
  published?: boolean;
}

@ObjectType({ description: 'A form with its webhook secret, which is shown only here.' })
export class FormWithSecret {
  @Field(() => Form)
  form!: Form;

  @Field({ description: 'Signs webhook deliveries (X-Agentbase-Signature: sha256=<hex HMAC-SHA256 of the body>). Shown once.' })
  webhookSecret!: string;
}

@InputType()
export class FormChatInput {
  @Field({ description: "The visitor's message." })
  @Length(1, 10_000)
  query!: string;

  @Field(() => ID, { nullable: true, description: 'Continue this conversation of the form; absent: a new one.' })
  conversationId?: string | null;

  @Field(() => String, { nullable: true, description: 'Absent: a new visitor id is made.' })
  @IsOptional()
  @Length(1, 200)
  visitorId?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'REST only: answer as server-sent events.' })
  streaming?: boolean | null;
}

@ObjectType({ description: 'Where the form stands after a message.' })
export class FormChatState {
  @Field(() => String, { nullable: true, description: 'The property asked next; null once the form is complete.' })
  currentField!: string | null;

  @Field({ description: 'False when the message was refused as an answer to the field asked (the reply says why and asks again).' })
  isValid!: boolean;
}

@ObjectType()
export class FormChatResponse extends FormChatState {
  @Field({ description: 'The reply to the visitor: the next question, a re-ask with the reason, or the closing words.' })
  answer!: string;

  @Field(() => ID)
  conversationId!: string;

  @Field()
  visitorId!: string;

  @Field(() => GraphQLJSONObject, { description: 'The valid values collected so far.' })
  values!: Record<string, unknown>;

  @Field(() => FormSubmissionStatus)
  status!: FormSubmissionStatus;

  @Field(() => ID)
  submissionId!: string;

  @Field(() => ID)
  messageId!: string;
}

export enum FormChatEventType {
  answer = 'answer',
  metadata = 'metadata',
  endpoint_response = 'endpoint_response',
}
registerEnumType(FormChatEventType, { name: 'FormChatEventType' });

@ObjectType({ description: 'A streamed form reply: `answer` events with text, one `metadata`, then `endpoint_response`.' })
export class FormChatEvent {
  @Field(() => FormChatEventType)
  type!: FormChatEventType;

  @Field(() => String, { nullable: true })
  text?: string | null;

  @Field(() => FormChatState, { nullable: true })
  metadata?: FormChatState | null;

  @Field(() => FormChatResponse, { nullable: true })
  response?: FormChatResponse | null;
}
