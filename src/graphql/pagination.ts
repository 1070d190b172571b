import { Max, Min } from 'class-validator';
import { ArgsType, type ClassType, Field, Int, ObjectType } from 'type-graphql';
import { badInput } from '../errors.ts';
import { isId } from '../ids.ts';

@ObjectType()
export class PageInfo {
  @Field(() => String, { nullable: true, description: 'Pass as `after` to get the next page.' })
  endCursor!: string | null;

  @Field()
  hasNextPage!: boolean;
}

export interface Page<T> {
  nodes: T[];
  pageInfo: PageInfo;
}

/** A cursor connection type: `nodes` newest first, and `pageInfo`. */
export function Connection<T extends object>(node: ClassType<T>) {
  @ObjectType()
  abstract class ConnectionClass {
    @Field(() => [node])
    nodes!: T[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;
  }
  return ConnectionClass;
}

export const MAX_PAGE = 100;

/** Checks page arguments. Throws BAD_USER_INPUT. */
export function pageArgs(first: number, after?: string | null): { first: number; after: string | null } {
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE) {
    throw badInput(`first must be from 1 to ${MAX_PAGE}.`, { field: 'first' });
  }
  if (after != null && !isId(after)) throw badInput('after is not a cursor returned by this API.', { field: 'after' });
  return { first, after: after ?? null };
}

/** Every page of a listing, as a client of the connection would read them one by one (bounded by the listing's own limits). */
export async function allPages<T>(page: (after: string | null) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let after: string | null = null;
  for (;;) {
    const { nodes, pageInfo } = await page(after);
    out.push(...nodes);
    if (!pageInfo.hasNextPage) return out;
    after = pageInfo.endCursor;
  }
}

/** Rows were fetched with limit first + 1 (ids are time-ordered, so id order is creation order). */
export function toPage<T extends { id: string }>(rows: T[], first: number): Page<T> {
  const nodes = rows.slice(0, first);
  return {
    nodes,
    pageInfo: { endCursor: nodes.at(-1)?.id ?? null, hasNextPage: rows.length > first },
  };
}

@ArgsType()
export class PageArgs {
  @Field(() => Int, { defaultValue: 20, description: '1 to 100.' })
  @Min(1)
  @Max(100)
  first!: number;

  @Field(() => String, { nullable: true, description: 'endCursor of the previous page.' })
  after?: string | null;
}
