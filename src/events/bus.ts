/**
 * Cross-process events over Postgres LISTEN/NOTIFY: every API and worker process hears what
 * any of them published (cache invalidation, datasource status changes). Nothing another
 * process needs is kept only in one process's memory.
 */
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import type { Em } from '../db/orm.ts';
import type { Logger } from '../logger.ts';

export type Handler = (payload: string) => void;

export interface EventBus {
  /** Sends through the given EntityManager, so inside a transaction it is delivered on commit. */
  publish(em: Em, channel: string, payload: string): Promise<void>;
  subscribe(channel: string, handler: Handler): Promise<() => void>;
  close(): Promise<void>;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;
const MAX_PAYLOAD = 7900; // Postgres refuses NOTIFY payloads of 8000 bytes or more

/**
 * A checked notification, for a caller that sends `pg_notify(channel, payload)` inside a statement
 * of its own (a write and its announcement in one round trip). Like publish(), it is delivered
 * to every process's subscribers when that statement's transaction commits.
 */
export function notification(channel: string, payload: string): { channel: string; payload: string } {
  if (!CHANNEL.test(channel)) throw new Error(`Bad channel name: ${channel}`);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD) throw new Error(`Event payload too large on ${channel}`);
  return { channel, payload };
}

export function createEventBus(database: DatabaseConfig, pglite: PGlite | null, logger: Logger): EventBus {
  const handlers = new Map<string, Set<Handler>>();
  const dispatch = (channel: string, payload: string) => {
    for (const h of handlers.get(channel) ?? []) {
      try {
        h(payload);
      } catch (err) {
        logger.error('event handler failed', { channel, error: err });
      }
    }
  };

  let listen: (channel: string) => Promise<void>;
  let closeListener: () => Promise<void> = async () => {};

  if (pglite) {
    const unlisteners: (() => Promise<void>)[] = [];
    listen = async (channel) => {
      unlisteners.push(await pglite.listen(channel, (payload) => dispatch(channel, payload)));
    };
    closeListener = async () => {
      if (!pglite.closed) await Promise.all(unlisteners.map((u) => u().catch(() => {})));
    };
  } else {
    if (database.kind !== 'postgres') throw new Error('An event bus needs PGlite or a PostgreSQL URL.');
    let client: pg.Client | null = null;
    let closed = false;
    const connect = async (): Promise<pg.Client> => {
      const c = new pg.Client({ connectionString: database.url });
      c.on('notification', (msg) => dispatch(msg.channel, msg.payload ?? ''));
      c.on('error', (err) => {
        logger.warn('event listener connection lost; reconnecting', { error: err });
        client = null;
        if (!closed) setTimeout(() => void reconnect(), 1000).unref();
      });
      await c.connect();
      for (const channel of handlers.keys()) await c.query(`listen ${channel}`);
      return c;
    };
    const reconnect = async () => {
      try {
        client = await connect();
      } catch (err) {
        logger.warn('event listener reconnect failed', { error: err });
        if (!closed) setTimeout(() => void reconnect(), 2000).unref();
      }
    };
    let ready: Promise<pg.Client> | null = null;
    listen = async (channel) => {
      ready ??= connect().then((c) => (client = c));
      const c = await ready;
      await (client ?? c).query(`listen ${channel}`);
    };
    closeListener = async () => {
      closed = true;
      await client?.end().catch(() => {});
    };
  }

  return {
    async publish(em, channel, payload) {
      notification(channel, payload);
      await em.getConnection().execute('select pg_notify(?, ?)', [channel, payload], 'all', em.getTransactionContext());
    },
    async subscribe(channel, handler) {
      if (!CHANNEL.test(channel)) throw new Error(`Bad channel name: ${channel}`);
      let set = handlers.get(channel);
      if (!set) {
        handlers.set(channel, (set = new Set()));
        await listen(channel);
      }
      set.add(handler);
      return () => void set.delete(handler);
    },
    close: () => closeListener(),
  };
}
