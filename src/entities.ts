import { Agent } from './agents/agent.entity.ts';
import { ApiKey } from './auth/api-key.entity.ts';
import { Membership } from './auth/membership.entity.ts';
import { Session } from './auth/session.entity.ts';
import { User } from './auth/user.entity.ts';
import { Datastore } from './datastores/datastore.entity.ts';
import { Chunk } from './ingestion/chunk.entity.ts';
import { Conversation } from './conversations/conversation.entity.ts';
import { Message } from './conversations/message.entity.ts';
import { Datasource } from './ingestion/datasource.entity.ts';
import { Form, FormSubmission } from './forms/form.entity.ts';
import { Organization } from './organizations/organization.entity.ts';

export const entities = [Organization, User, Membership, Session, ApiKey, Datastore, Agent, Datasource, Chunk, Conversation, Message, Form, FormSubmission];
