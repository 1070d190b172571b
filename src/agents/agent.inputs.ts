import { IsOptional, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { Field, Float, ID, InputType } from 'type-graphql';
import { ModelName, PromptType, Visibility } from '../vocabulary.ts';

export const HANDLE_PATTERN = /^@?[a-z0-9][a-z0-9_-]{2,39}$/;
const PROMPT_MAX = 20_000;

@InputType()
export class CreateAgentInput {
  @Field()
  @Length(1, 200)
  name!: string;

  @Field({ nullable: true, defaultValue: '' })
  @MaxLength(2000)
  description!: string;

  @Field(() => String, { nullable: true, description: '3 to 40 of a-z, 0-9, "_" and "-"; a leading "@" is accepted.' })
  @IsOptional()
  @Matches(HANDLE_PATTERN, { message: 'handle must be 3 to 40 of a-z, 0-9, "_" and "-", starting with a letter or digit' })
  handle?: string | null;

  @Field(() => ModelName, { nullable: true, defaultValue: ModelName.model_3_5_turbo })
  modelName!: ModelName;

  @Field(() => Float, { nullable: true, defaultValue: 0 })
  @Min(0)
  @Max(1)
  temperature!: number;

  @Field(() => Visibility, { nullable: true, defaultValue: Visibility.private })
  visibility!: Visibility;

  @Field({ nullable: true, defaultValue: '' })
  @MaxLength(PROMPT_MAX)
  systemPrompt!: string;

  @Field({ nullable: true, defaultValue: '' })
  @MaxLength(PROMPT_MAX)
  userPrompt!: string;

  @Field(() => PromptType, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  promptType?: PromptType | null;

  @Field(() => String, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  @IsOptional()
  @MaxLength(PROMPT_MAX)
  promptTemplate?: string | null;

  @Field(() => [ID], { nullable: true, description: 'Datastores of the same organization the agent answers from.' })
  datastoreIds?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Origins (scheme://host[:port], at most 50) whose web pages may call it; empty or null = any origin.' })
  allowedOrigins?: string[] | null;
}

/** As in the REST interface (PATCH /agents/{id}): description is required, the rest optional. */
@InputType()
export class UpdateAgentInput {
  @Field()
  @MaxLength(2000)
  description!: string;

  @Field({ nullable: true })
  @IsOptional()
  @Length(1, 200)
  name?: string;

  @Field(() => String, { nullable: true, description: 'Set to null to remove the handle.' })
  @IsOptional()
  @Matches(HANDLE_PATTERN, { message: 'handle must be 3 to 40 of a-z, 0-9, "_" and "-", starting with a letter or digit' })
  handle?: string | null;

  @Field(() => ModelName, { nullable: true })
  modelName?: ModelName;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @Min(0)
  @Max(1)
  temperature?: number;

  @Field(() => Visibility, { nullable: true })
  visibility?: Visibility;

  @Field({ nullable: true })
  @IsOptional()
  @MaxLength(PROMPT_MAX)
  systemPrompt?: string;

  @Field({ nullable: true })
  @IsOptional()
  @MaxLength(PROMPT_MAX)
  userPrompt?: string;

  @Field(() => PromptType, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  promptType?: PromptType | null;

  @Field(() => String, { nullable: true, deprecationReason: 'Use systemPrompt and userPrompt.' })
  @IsOptional()
  @MaxLength(PROMPT_MAX)
  promptTemplate?: string | null;

  @Field(() => [ID], { nullable: true, description: 'Replaces the linked datastores when given.' })
  datastoreIds?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Replaces the allowed origins when given (scheme://host[:port], at most 50); [] = any origin.' })
  allowedOrigins?: string[] | null;
}
