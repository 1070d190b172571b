import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000Foundation } from './Migration20261122000000Foundation.ts';
import { Migration20261122010000Ingestion } from './Migration20261122010000Ingestion.ts';
import { Migration20261122020000Conversations } from './Migration20261122020000Conversations.ts';
import { Migration20261122030000Forms } from './Migration20261122030000Forms.ts';
import { Migration20261124000000ReserveQuery } from './Migration20261124000000ReserveQuery.ts';
import { Migration20261125000000RateCounters } from './Migration20261125000000RateCounters.ts';
import { Migration20261126000100AllowedOrigins } from './Migration20261126000100AllowedOrigins.ts';
import { Migration20261126000200ScopedApiKeys } from './Migration20261126000200ScopedApiKeys.ts';
import { Migration20261127000100ResyncSchedule } from './Migration20261127000100ResyncSchedule.ts';
import { Migration20261127000200Reembed } from './Migration20261127000200Reembed.ts';
import { Migration20261128000200GinPendingList } from './Migration20261128000200GinPendingList.ts';
import { Migration20261129000100ConversationsByOrganization } from './Migration20261129000100ConversationsByOrganization.ts';
import { Migration20261129000400ChunkInsertCost } from './Migration20261129000400ChunkInsertCost.ts';
import { Migration20261129006600GroupedLimits } from './Migration20261129006600GroupedLimits.ts';

/** Applied in order, at start-up and by `npm run migrate`. Never edit a migration that has shipped. */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261122000000Foundation', class: Migration20261122000000Foundation },
  { name: 'Migration20261122010000Ingestion', class: Migration20261122010000Ingestion },
  { name: 'Migration20261122020000Conversations', class: Migration20261122020000Conversations },
  { name: 'Migration20261122030000Forms', class: Migration20261122030000Forms },
  { name: 'Migration20261124000000ReserveQuery', class: Migration20261124000000ReserveQuery },
  { name: 'Migration20261125000000RateCounters', class: Migration20261125000000RateCounters },
  { name: 'Migration20261126000100AllowedOrigins', class: Migration20261126000100AllowedOrigins },
  { name: 'Migration20261126000200ScopedApiKeys', class: Migration20261126000200ScopedApiKeys },
  { name: 'Migration20261127000100ResyncSchedule', class: Migration20261127000100ResyncSchedule },
  { name: 'Migration20261127000200Reembed', class: Migration20261127000200Reembed },
  { name: 'Migration20261128000200GinPendingList', class: Migration20261128000200GinPendingList },
  { name: 'Migration20261129000100ConversationsByOrganization', class: Migration20261129000100ConversationsByOrganization },
  { name: 'Migration20261129000400ChunkInsertCost', class: Migration20261129000400ChunkInsertCost },
  { name: 'Migration20261129006600GroupedLimits', class: Migration20261129006600GroupedLimits },
];
