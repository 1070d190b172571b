/**
 * What one GraphQL operation may ask for, the same on /graphql (Apollo) and /graphql/stream
 * (graphql-sse): depth, aliases, directives and structural cost are graphql-armor's rules (its
 * per-rule packages, which are plain validation rules either transport can run), tokens are
 * counted by graphql-js's own parser (`maxTokens`), and the fields that run an embedding or a
 * model call are weighed here. Every refusal is BAD_USER_INPUT whose message names the limit and
 * its figure; `details` carries the setting that changes it.
 *
 * Why not armor's Apollo plugin as is: its token check throws from `parsingDidStart`, which Apollo
 * answers as a 500, and it has no notion of our costly fields or of who is asking.
 */
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import {
  GraphQLError,
  Kind,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type OperationTypeNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { AppError } from '../errors.ts';

export interface Budgets {
  /** GRAPHQL_DEPTH_LIMIT: nested selections, fragments followed. */
  depth: number;
  maxAliases: number;
  maxDirectives: number;
  maxTokens: number;
  maxCost: number;
  modelCallCost: number;
  anonymousModelCalls: number;
}

/**
 * Root fields that embed a query or call a model while the request waits: each costs
 * `modelCallCost`, and an anonymous operation may run `anonymousModelCalls` of them. (Ingestion
 * embeds too, but in a job the queue paces.)
 */
export const MODEL_CALL_FIELDS: Readonly<Record<'query' | 'mutation' | 'subscription', readonly string[]>> = {
  query: ['datastoreQuery'],
  mutation: ['agentQuery', 'formChat', 'universalProcess'],
  subscription: ['agentQueryStream', 'formChatStream'],
};

/** The error a validation rule reports: an AppError inside, so both transports keep its details. */
function refusal(message: string, details: Record<string, unknown>): GraphQLError {
  return new GraphQLError(message, { originalError: new AppError('BAD_USER_INPUT', message, details) });
}

/** The figure armor found, from its message ("…exceeded, found 31."). */
const foundIn = (message: string): number | null => {
  const m = /found (\d+(?:\.\d+)?)/.exec(message);
  return m ? Math.ceil(Number(m[1])) : null;
};

/** An armor rule whose rejection is reported (not thrown) in our words. */
function armorRule<O>(rule: (options: O) => ValidationRule, options: O, say: (found: number | null) => GraphQLError): ValidationRule {
  return (context: ValidationContext) =>
    rule({
      ...options,
      propagateOnRejection: false,
      onReject: [(_ctx: unknown, error: GraphQLError) => context.reportError(say(foundIn(error.message)))],
    } as O)(context);
}

/** Refuses operations nested deeper than `max` selections (fragments followed, introspection aside). */
export function depthRule(max: number): ValidationRule {
  // Armor counts the leaf fields as a level; GRAPHQL_DEPTH_LIMIT never did, hence the + 1.
  return armorRule(maxDepthRule, { n: max + 1, flattenFragments: true, ignoreIntrospection: true }, (found) =>
    refusal(`The operation is nested ${found === null ? 'too' : found - 1} levels deep; the limit is ${max}.`, { limit: 'GRAPHQL_DEPTH_LIMIT', max }),
  );
}

/** Validation rules of the budgets that need no caller: depth, aliases, directives, cost. */
export function budgetRules(b: Budgets): ValidationRule[] {
  return [
    depthRule(b.depth),
    armorRule(maxAliasesRule, { n: b.maxAliases }, (found) =>
      refusal(`The operation has ${found ?? 'too many'} aliases; the limit is ${b.maxAliases}.`, { limit: 'GRAPHQL_MAX_ALIASES', max: b.maxAliases }),
    ),
    armorRule(maxDirectivesRule, { n: b.maxDirectives }, (found) =>
      refusal(`The operation has ${found ?? 'too many'} directives; the limit is ${b.maxDirectives}.`, { limit: 'GRAPHQL_MAX_DIRECTIVES', max: b.maxDirectives }),
    ),
    costRule(b),
  ];
}

/**
 * Armor's structural cost (fields, depth, `first`) plus `modelCallCost` per field that embeds or
 * calls a model: one answer weighs as much as a large page of plain fields.
 */
function costRule(b: Budgets): ValidationRule {
  return (context) => {
    let structural = 0;
    const armor = costLimitRule({ maxCost: Number.MAX_SAFE_INTEGER, propagateOnRejection: false, onAccept: [(_ctx, details: { n: number }) => (structural = details.n)] })(context);
    return {
      OperationDefinition(node) {
        structural = 0;
        armor.OperationDefinition.enter(node);
        const calls = modelCalls(context.getDocument(), node);
        const cost = Math.ceil(structural + calls * b.modelCallCost);
        if (cost > b.maxCost) {
          context.reportError(
            refusal(
              `The operation costs ${cost}; the limit is ${b.maxCost} (each field that embeds or calls a model, such as ${MODEL_CALL_FIELDS.query[0]} or ${MODEL_CALL_FIELDS.mutation[0]}, costs ${b.modelCallCost}). Send fewer fields, or several requests.`,
              { limit: 'GRAPHQL_MAX_COST', max: b.maxCost, cost, modelCallCost: b.modelCallCost },
            ),
          );
        }
      },
    };
  };
}

/** How many root fields of `operation` embed or call a model: aliases and fragments included, @skip ignored. */
export function modelCalls(document: DocumentNode, operation: OperationDefinitionNode): number {
  const costly = MODEL_CALL_FIELDS[operation.operation as `${OperationTypeNode}`];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const count = (set: SelectionSetNode, seen: Set<string>): number => {
    let n = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) n += costly.includes(s.name.value) ? 1 : 0;
      else if (s.kind === Kind.INLINE_FRAGMENT) n += count(s.selectionSet, seen);
      else {
        const fragment = fragments.get(s.name.value);
        if (fragment && !seen.has(s.name.value)) n += count(fragment.selectionSet, new Set(seen).add(s.name.value));
      }
    }
    return n;
  };
  return count(operation.selectionSet, new Set());
}

/**
 * Throws BAD_USER_INPUT when an anonymous caller's operation runs more model calls than allowed:
 * one request must not buy what the per-request rate limit counts once.
 */
export function checkAnonymousCalls(b: Budgets, document: DocumentNode, operation: OperationDefinitionNode): void {
  const calls = modelCalls(document, operation);
  if (calls <= b.anonymousModelCalls) return;
  const all = Object.values(MODEL_CALL_FIELDS).flat().join(', ');
  throw new AppError(
    'BAD_USER_INPUT',
    `An operation without credentials may run ${b.anonymousModelCalls} field${b.anonymousModelCalls === 1 ? '' : 's'} that embed or call a model (${all}); this one runs ${calls}. Send one per request, or authenticate.`,
    { limit: 'GRAPHQL_ANONYMOUS_MODEL_CALLS', max: b.anonymousModelCalls, found: calls },
  );
}

/** graphql-js's parser with the token budget. */
export function parseOptions(b: Budgets): { maxTokens: number } {
  return { maxTokens: b.maxTokens };
}

/** The token refusal in the words of the other budgets (graphql-js says "more that N tokens"). */
export function tokenMessage(b: Budgets, message: string): string | null {
  return /contains more that \d+ tokens/.test(message) ? `The operation has more than ${b.maxTokens} tokens; the limit is ${b.maxTokens}.` : null;
}

/** Parses within the token budget. Throws BAD_USER_INPUT (syntax, tokens). */
export function parseWithin(b: Budgets, query: string): DocumentNode {
  try {
    return parse(query, parseOptions(b));
  } catch (err) {
    const message = (err as Error).message;
    const tokens = tokenMessage(b, message);
    throw new AppError('BAD_USER_INPUT', tokens ?? message, tokens ? { limit: 'GRAPHQL_MAX_TOKENS', max: b.maxTokens } : undefined);
  }
}

export function budgetsOf(config: { graphqlDepthLimit: number; graphqlBudgets: Omit<Budgets, 'depth'> }): Budgets {
  return { depth: config.graphqlDepthLimit, ...config.graphqlBudgets };
}
