import { IsOptional, Length, MaxLength } from 'class-validator';
import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from '../graphql/json.ts';
import { Datasource, DatasourceStatus, DatasourceType } from './datasource.entity.ts';

@InputType({ description: 'A web page, a web site or a raw text document. Files go through createUploadLink or the REST upload paths.' })
export class CreateDatasourceInput {
  @Field(() => ID)
  datastoreId!: string;

  @Field(() => DatasourceType)
  type!: DatasourceType;

  @Field({ nullable: true })
  @IsOptional()
  @MaxLength(500)
  name?: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'web_page: {source_url}; web_site: {sitemap} or {source_url}.' })
  config?: Record<string, unknown>;

  @Field({ nullable: true, description: 'The text of a `text` document.' })
  text?: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  metadata?: Record<string, unknown>;

  @Field({ nullable: true, description: 'Your own id, for filtering queries (multi-tenant set-ups).' })
  @IsOptional()
  @MaxLength(200)
  customId?: string;

  @Field({ nullable: true, description: 'web_page and web_site: none (default), daily, weekly or a five-field cron expression (UTC) to fetch it again on.' })
  resyncSchedule?: string;
}

@InputType({ description: 'Fields left out (or null) keep their value.' })
export class UpdateDatasourceInput {
  @Field({ nullable: true })
  @IsOptional()
  @Length(1, 500)
  name?: string;

  @Field({ nullable: true, description: 'web_page and web_site: none, daily, weekly or a five-field cron expression (UTC).' })
  resyncSchedule?: string;
}

@InputType()
export class UploadLinkInput {
  @Field({ description: 'The MIME type of the file.' })
  @Length(1, 200)
  type!: string;

  @Field({ nullable: true })
  @IsOptional()
  @MaxLength(255)
  fileName?: string;
}

@InputType()
export class UpdateDocumentInput {
  @Field(() => ID, { description: 'The document (datasource) id.' })
  id!: string;

  @Field()
  text!: string;

  @Field({ nullable: true })
  @IsOptional()
  @MaxLength(500)
  name?: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  metadata?: Record<string, unknown>;
}

@ObjectType({ description: 'Where to PUT the file: a pre-signed link valid 15 minutes. Then call processUpload.' })
export class UploadLink {
  @Field(() => ID, { description: 'The datasource id.' })
  id!: string;

  @Field()
  link!: string;

  @Field(() => Date)
  expiresAt!: Date;

  @Field(() => GraphQLJSONObject, { description: 'Headers the PUT must carry (at least content-type).' })
  headers!: Record<string, string>;

  @Field(() => Datasource)
  datasource!: Datasource;
}

@ObjectType({ description: 'A datasource changed state.' })
export class DatasourceStatusChange {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  datastoreId!: string;

  @Field()
  name!: string;

  @Field(() => DatasourceType)
  type!: DatasourceType;

  @Field(() => DatasourceStatus)
  status!: DatasourceStatus;

  @Field(() => String, { nullable: true })
  errorMessage!: string | null;

  @Field()
  chunkCount!: number;

  @Field(() => Date)
  at!: Date;
}
