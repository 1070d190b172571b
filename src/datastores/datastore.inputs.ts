import { IsOptional, Length, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
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
}
