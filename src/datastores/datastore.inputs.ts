import { IsOptional, Length, Max, MaxLength, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { Visibility } from '../vocabulary.ts';

@InputType()
export class CreateDatastoreInput {
  @Field()
  @Length(1, 200)
  name!: string;

  @Field({ nullable: true, defaultValue: '' })
  @MaxLength(2000)
  description!: string;

  @Field(() => Visibility, { nullable: true, defaultValue: Visibility.private })
  visibility!: Visibility;

  @Field(() => Int, { nullable: true, description: 'Characters per chunk, 100 to 8,000 (default 1,000).' })
  @IsOptional()
  @Min(100)
  @Max(8000)
  chunkSize?: number;

  @Field(() => Int, { nullable: true, description: 'Characters shared by neighbouring chunks, 0 to 4,000 (default 200).' })
  @IsOptional()
  @Min(0)
  @Max(4000)
  chunkOverlap?: number;

  @Field(() => [String], { nullable: true, description: 'Origins (scheme://host[:port], at most 50) whose web pages may call it; empty or null = any origin.' })
  allowedOrigins?: string[] | null;

  @Field({ nullable: true, description: 'When to fetch all its web_page and web_site datasources again: none (default), daily, weekly or a five-field cron expression (UTC).' })
  resyncSchedule?: string;
}

@InputType()
export class UpdateDatastoreInput {
  @Field({ nullable: true })
  @IsOptional()
  @Length(1, 200)
  name?: string;

  @Field({ nullable: true })
  @IsOptional()
  @MaxLength(2000)
  description?: string;

  @Field(() => Visibility, { nullable: true })
  visibility?: Visibility;

  @Field(() => Int, { nullable: true, description: 'Characters per chunk, 100 to 8,000 (default 1,000).' })
  @IsOptional()
  @Min(100)
  @Max(8000)
  chunkSize?: number;

  @Field(() => Int, { nullable: true, description: 'Characters shared by neighbouring chunks, 0 to 4,000 (default 200).' })
  @IsOptional()
  @Min(0)
  @Max(4000)
  chunkOverlap?: number;

  @Field(() => [String], { nullable: true, description: 'Replaces the allowed origins when given (scheme://host[:port], at most 50); [] = any origin.' })
  allowedOrigins?: string[] | null;

  @Field({ nullable: true, description: 'Changes the embedding model: `local` (the shipped model) or a model name of the configured embeddings endpoint. Every chunk is re-embedded in the background (pendingEmbeddingModel, reembedProgress); queries use the old vectors until all are done. The model in use cancels a change under way.' })
  @IsOptional()
  @MaxLength(210)
  embeddingModel?: string;
  @Field({ nullable: true, description: 'none, daily, weekly or a five-field cron expression (UTC) for all its web datasources.' })
  resyncSchedule?: string;
}
