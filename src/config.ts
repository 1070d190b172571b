import path from 'node:path';

/** The only place that reads process.env: everything else is handed a Config. */
export type DatabaseConfig =
  | { kind: 'pglite'; dataDir: string | null /* null = in memory */ }
  | { kind: 'postgres'; url: string };

export type Role = 'all' | 'api' | 'worker';

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly database: DatabaseConfig;
  readonly role: Role;
  readonly restBasePath: string;
  readonly signupEnabled: boolean;
  readonly sessionTtlDays: number;
  readonly cookieSecure: boolean;
  readonly graphqlDepthLimit: number;
  readonly introspection: boolean;
  readonly jsonBodyLimitBytes: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Recorded on each datastore at creation. */
  readonly embedding: { readonly model: string; readonly dimension: number };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Parses the environment once; lists every bad variable in one error. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name} must be one of ${values.join(', ')} (got "${raw}")`);
    return fallback;
  };

  const nodeEnv = oneOf('NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  const dataDir = path.resolve(env.DATA_DIR || './data');

  let database: DatabaseConfig = { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') };
  const url = env.DATABASE_URL;
  if (url) {
    if (url === 'pglite://memory') database = { kind: 'pglite', dataDir: null };
    else if (/^postgres(ql)?:\/\//.test(url)) {
      try {
        new URL(url);
        database = { kind: 'postgres', url };
      } catch {
        problems.push('DATABASE_URL is not a valid URL');
      }
    } else {
      problems.push('DATABASE_URL must start with postgres:// or postgresql:// (or be pglite://memory)');
    }
  }

  let restBasePath = env.REST_BASE_PATH ?? '/api';
  if (restBasePath !== '' && !/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/.test(restBasePath)) {
    problems.push(`REST_BASE_PATH must start with / and not end with / (got "${restBasePath}")`);
    restBasePath = '/api';
  }

  const config: Config = {
    env: nodeEnv,
    port: int('PORT', 3000, 0, 65535),
    host: env.HOST || '0.0.0.0',
    dataDir,
    database,
    role: oneOf('ROLE', ['all', 'api', 'worker'] as const, 'all'),
    restBasePath,
    signupEnabled: bool('SIGNUP_ENABLED', true),
    sessionTtlDays: int('SESSION_TTL_DAYS', 30, 1, 365),
    cookieSecure: bool('COOKIE_SECURE', nodeEnv === 'production'),
    graphqlDepthLimit: int('GRAPHQL_DEPTH_LIMIT', 10, 2, 50),
    introspection: bool('GRAPHQL_INTROSPECTION', nodeEnv !== 'production'),
    jsonBodyLimitBytes: int('JSON_BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    logLevel: oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    embedding: { model: 'local/universal-sentence-encoder', dimension: 512 },
  };
  if (problems.length) throw new ConfigError(problems);
  return Object.freeze(config);
}
