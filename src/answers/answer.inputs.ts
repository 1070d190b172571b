import { IsOptional, Length, Max, MaxLength, Min } from 'class-validator';
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { Usage } from '../providers/chat.ts';
import { PromptType } from '../vocabulary.ts';

/** The model tiers a query may ask for (model_4_32k is not among them, as in the REST interface). */
export enum QueryModelName {
  model_3_5_turbo = 'model_3_5_turbo',
  model_3_5_turbo_16k = 'model_3_5_turbo_16k',
  model_4 = 'model_4',
}
registerEnumType(QueryModelName, { name: 'QueryModelName' });

@InputType()
export class QueryFilters {
  @Field(() => [String], { nullable: true, description: 'Only fragments of datasources with these custom ids.' })
  custom_ids?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Only fragments of these datasources.' })
  datasource_ids?: string[] | null;
}

@InputType()
export class DatastoreQueryInput {
  @Field()
  @Length(1, 10_000)
  query!: string;

  @Field(() => Int, { nullable: true, description: '1 to 100; default 5.' })
  @IsOptional()
  @Min(1)
  @Max(100)
  topK?: number | null;

  @Field(() => QueryFilters, { nullable: true })
  filters?: QueryFilters | null;

  @Field(() => Float, { nullable: true, description: 'Only fragments scoring at least this (0 to 1; see QueryResult.score).' })
  @IsOptional()
  @Min(0)
  @Max(1)
  minScore?: number | null;
}

@InputType()
export class AgentQueryInput {
  @Field()
  @Length(1, 10_000)
  query!: string;

  @Field(() => ID, { nullable: true, description: 'Continue this conversation (its history is sent to the model); absent: a new one.' })
  conversationId?: string | null;

  @Field(() => String, { nullable: true, description: 'Absent: a new visitor id is made.' })
  @IsOptional()
  @Length(1, 200)
  visitorId?: string | null;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @Min(0)
  @Max(1)
  temperature?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'REST only: answer as server-sent events.' })
  streaming?: boolean | null;

  @Field(() => QueryModelName, { nullable: true })
  modelName?: QueryModelName | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @Min(1)
  @Max(128_000)
  maxTokens?: number | null;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @Min(-2)
  @Max(2)
  presencePenalty?: number | null;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @Min(-2)
  @Max(2)
  frequencyPenalty?: number | null;

  @Field(() => Float, { nullable: true, description: 'Nucleus sampling, 0 to 1; change this or temperature, not both.' })
  @IsOptional()
  @Min(0)
  @Max(1)
  topP?: number | null;

  @Field(() => QueryFilters, { nullable: true })
  filters?: QueryFilters | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(20_000)
  systemPrompt?: string | null;

  @Field(() => String, { nullable: true, description: 'Placeholders: {query} and {context}.' })
  @IsOptional()
  @MaxLength(20_000)
  userPrompt?: string | null;

  @Field(() => PromptType, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  promptType?: PromptType | null;

  @Field(() => String, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  @IsOptional()
  @MaxLength(20_000)
  promptTemplate?: string | null;
}

/**
 * The weight of the share of the query's words in a fragment's score, against the cosine's 1
 * (retrieval.service.ts computes it): 2 separates answerable from unanswerable questions best on
 * the evaluation set (docs/evaluation.md).
 */
export const WORD_WEIGHT = 2;
/** What a fragment's score is, for the API's descriptions of it (GraphQL, MCP). */
export const SCORE_DESCRIPTION = `Relevance from 0 to 1, comparable across queries of a datastore: (the cosine similarity to the query + ${WORD_WEIGHT} × the share of its words the fragment contains, a synonym of a word counting half) / ${1 + WORD_WEIGHT}.`;

@ObjectType({ description: 'A fragment of a datastore.' })
export class QueryResult {
  @Field()
  text!: string;

  @Field(() => Float, { description: SCORE_DESCRIPTION })
  score!: number;

  @Field({ description: 'The page URL or the file name.' })
  source!: string;

  @Field(() => ID)
  datasource_id!: string;

  @Field()
  datasource_name!: string;

  @Field(() => Int, { nullable: true })
  page!: number | null;

  @Field(() => String, { nullable: true })
  custom_id!: string | null;
}

@ObjectType()
export class AgentAnswer {
  @Field()
  answer!: string;

  @Field(() => ID)
  conversationId!: string;

  @Field()
  visitorId!: string;

  @Field(() => [QueryResult], { description: 'The fragments the answer was built from.' })
  sources!: QueryResult[];

  @Field(() => ID)
  messageId!: string;

  /** The model endpoint's token counts (null when it gave none, or for the extractive answerer); not in the GraphQL schema: the OpenAI-compatible endpoint reports them. */
  usage?: Usage | null;
}

export enum AnswerEventType {
  answer = 'answer',
  endpoint_response = 'endpoint_response',
}
registerEnumType(AnswerEventType, { name: 'AnswerEventType' });

@ObjectType({ description: 'A streamed answer: `answer` events carry text; the last event, `endpoint_response`, the rest.' })
export class AnswerEvent {
  @Field(() => AnswerEventType)
  type!: AnswerEventType;

  @Field(() => String, { nullable: true })
  text?: string | null;

  @Field(() => AgentAnswer, { nullable: true })
  response?: AgentAnswer | null;
}
