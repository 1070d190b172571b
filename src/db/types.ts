import type { MikroORM, SqlEntityManager } from '@mikro-orm/sql';

/** The ORM and its per-request EntityManager, as every layer names them (types only: no import of the ORM's set-up). */
export type Orm = MikroORM;
export type Em = SqlEntityManager;
