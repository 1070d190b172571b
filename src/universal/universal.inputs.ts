import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from '../graphql/json.ts';

@InputType({ description: 'A file for the universal processor (interface.md endpoint 8).' })
export class UniversalInput {
  @Field({ description: 'The file, base64-encoded (standard alphabet; line breaks and a data: URL prefix are accepted). At most UPLOAD_MAX_BYTES once decoded.' })
  fileBuffer!: string;

  @Field({
    description:
      'The file extension, with or without the dot, any case. Images jpg, jpeg, png, webp, gif, tiff; audio mp3, wav, m4a, ogg, webm; video mp4, avi, mov, wmv; documents pdf, doc, docx, txt.',
  })
  @MaxLength(40)
  fileType!: string;

  @Field(() => String, { nullable: true, description: 'Shown back in context.fileName; default file.<fileType>.' })
  @IsOptional()
  @MaxLength(1000)
  fileName?: string | null;

  @Field(() => String, { nullable: true, description: 'What to do with the file. Blank: only extract (no model is called, except speech to text).' })
  @IsOptional()
  @MaxLength(10_000)
  userQuery?: string | null;
}

@ObjectType({ description: 'What the universal processor found in a file.' })
export class UniversalResult {
  @Field({ description: 'True when the file was read; failures are errors (REST: success false with the error).' })
  success!: boolean;

  @Field({ description: "A model's answer to userQuery, or the extracted content introduced as such." })
  messageText!: string;

  @Field(() => GraphQLJSONObject, { description: 'File facts, metadata, extracted text (capped), capabilities: see the README.' })
  context!: Record<string, unknown>;
}
