import { registerEnumType } from 'type-graphql';

/** Enum values are spelled exactly as in the REST interface, so both transports share one vocabulary. */
export enum Visibility {
  public = 'public',
  private = 'private',
}
registerEnumType(Visibility, { name: 'Visibility' });

export enum ModelName {
  model_3_5_turbo = 'model_3_5_turbo',
  model_3_5_turbo_16k = 'model_3_5_turbo_16k',
  model_4 = 'model_4',
  model_4_32k = 'model_4_32k',
}
registerEnumType(ModelName, {
  name: 'ModelName',
  description: 'Model tiers; each maps to a configurable model id of the chat endpoint.',
});

export enum PromptType {
  raw = 'raw',
  customer_support = 'customer_support',
}
registerEnumType(PromptType, {
  name: 'PromptType',
  description: 'Deprecated: use systemPrompt and userPrompt.',
});
