import path from 'node:path';

/** shared_buffers of the embedded database when PGLITE_SHARED_BUFFERS_MB is not set (src/db/pglite-settings.ts says why). */
export const DEFAULT_PGLITE_SHARED_BUFFERS_MB = 32;

/** The only place that reads process.env: everything else is handed a Config. */
export type DatabaseConfig =
  | { kind: 'pglite'; dataDir: string | null /* null = in memory */; /** PGLITE_SHARED_BUFFERS_MB */ sharedBuffersMb?: number }
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
  /** CONSOLE_ENABLED: the browser pages (console, public chat, widget, GraphQL IDE); the APIs stay either way. */
  readonly consoleEnabled: boolean;
  readonly sessionTtlDays: number;
  readonly cookieSecure: boolean;
  readonly graphqlDepthLimit: number;
  readonly introspection: boolean;
  readonly jsonBodyLimitBytes: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** LOG_PRETTY: human-readable log lines; null = pretty in development on a terminal. */
  readonly logPretty: boolean | null;
  /** Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio…); null = embedded defaults. */
  /** maxSockets: MODEL_MAX_SOCKETS, connections to the endpoint at once (each streamed answer holds one). */
  readonly openai: { readonly baseUrl: string; readonly apiKey: string; readonly maxSockets?: number } | null;
  /** RERANK_URL: a `/rerank` endpoint (Cohere/Jina shape) that reorders search candidates; null = none. */
  readonly rerank: { readonly url: string; readonly model: string | null; readonly apiKey: string | null } | null;
  /** Recorded on each datastore at creation. `local` = the model shipped in an npm package. */
  readonly embedding: {
    readonly provider: 'local' | 'openai';
    readonly model: string;
    readonly dimension: number;
    readonly batchSize: number;
  };
  /** EMBEDDING_QUERY_CACHE: vectors of recent query texts kept per model (0 = none); retrieval/query-vectors.ts. */
  readonly embeddingQueryCache: number;
  readonly storage:
    | { readonly kind: 'local'; readonly dir: string }
    | { readonly kind: 'gcs'; readonly bucket: string; readonly apiEndpoint: string | null; readonly projectId: string | null };
  /** Base URL this service is reached at, for links it hands out (local upload links). */
  readonly publicUrl: string;
  readonly uploadMaxBytes: number;
  /** Crawlers refuse private, loopback and link-local addresses unless this is true. */
  readonly allowPrivateUrls: boolean;
  /** The modelName enum mapped to model ids of the chat endpoint. */
  readonly models: {
    readonly model_3_5_turbo: string;
    readonly model_3_5_turbo_16k: string;
    readonly model_4: string;
    readonly model_4_32k: string;
    /** Image questions (universal processor); null = OCR and metadata only. */
    readonly vision: string | null;
    /** Speech to text (universal processor); null = metadata only. */
    readonly transcription: string | null;
  };
  /** Defaults for new organizations (each organization's row can then be changed). */
  readonly limits: {
    readonly storedTokens: number;
    readonly crawlPages: number;
    readonly queriesPerMonth: number;
  };
  /** Anonymous visitors of public agents: requests per minute per visitor and per IP. */
  readonly rateLimits: { readonly perVisitorPerMinute: number; readonly perIpPerMinute: number };
  /**
   * Background jobs (pg-boss). A running job's worker refreshes its heartbeat every
   * heartbeatSeconds / 2; a job whose heartbeat is older than heartbeatSeconds (its worker died)
   * is failed and retried by the next supervision pass, every superviseSeconds, after
   * retryDelaySeconds (doubling with each attempt). A job that reports no progress for
   * stallSeconds (JOB_STALL_SECONDS; its worker alive but stuck) is aborted and failed likewise; 0 = never.
   */
  readonly jobs: { readonly heartbeatSeconds: number; readonly superviseSeconds: number; readonly retryDelaySeconds: number; readonly retryLimit?: number; readonly stallSeconds?: number };
  /** MODEL_TIMEOUT_MS: how long a chat model may take to its first token, and between two tokens. */
  readonly modelTimeoutMs: number;
  /** STALLED_SWEEP_SECONDS: how often datasources whose job is gone or exhausted are failed with a reason; 0 = never. */
  readonly stalledSweepSeconds: number;
  /** CORS_ORIGINS: the only origins whose pages may send the session cookie (exact, canonical). */
  readonly corsOrigins: readonly string[];
  /**
   * GET /metrics (Prometheus text format). token: METRICS_TOKEN, the bearer token a scrape must
   * carry (null = none needed); port: METRICS_PORT, a separate port that serves /metrics instead
   * of the main one (null = the main port).
   */
  readonly metrics: { readonly enabled: boolean; readonly token: string | null; readonly port: number | null };
  /** SHUTDOWN_GRACE_MS: on SIGTERM, how long requests, streams and jobs in flight may still take (src/http/drain.ts). */
  readonly shutdownGraceMs: number;
  /**
   * What one GraphQL operation may ask for (src/graphql/budgets.ts), on /graphql and
   * /graphql/stream alike; the depth is `graphqlDepthLimit`. A field that runs an embedding or a
   * model call costs `modelCallCost`; an anonymous operation may run `anonymousModelCalls` of them.
   */
  readonly graphqlBudgets: {
    readonly maxAliases: number;
    readonly maxDirectives: number;
    readonly maxTokens: number;
    readonly maxCost: number;
    readonly modelCallCost: number;
    readonly anonymousModelCalls: number;
  };
  /** Sign-ups and sign-in attempts per client address, whatever the email (src/limits/limits.ts). */
  readonly authRates: { readonly signUpsPerHour: number; readonly signInsPerMinute: number };
  /**
   * TRUST_PROXY_PROTO: a loopback proxy's `X-Forwarded-Proto: https` marks the request as TLS (the
   * session cookie gets Secure), as its `X-Forwarded-For` already names the client.
   */
  readonly trustProxyProto: boolean;
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

  let database: DatabaseConfig = { kind: 'pglite', dataDir: path.join(dataDir, 'pglite'), sharedBuffersMb: int('PGLITE_SHARED_BUFFERS_MB', DEFAULT_PGLITE_SHARED_BUFFERS_MB, 1, 4096) };
  const url = env.DATABASE_URL;
  if (url) {
    if (url === 'pglite://memory') database = { kind: 'pglite', dataDir: null, sharedBuffersMb: database.sharedBuffersMb };
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

  // Exact origins, as browsers send them: lower-case scheme and host, no path, no default port.
  const corsOrigins: string[] = [];
  for (const raw of (env.CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean)) {
    let origin: string | null = null;
    try {
      if (/^https?:\/\/[^/?#@*\s]+\/?$/i.test(raw)) origin = new URL(raw).origin;
    } catch {
      /* reported below */
    }
    if (origin) corsOrigins.push(origin);
    else problems.push(`CORS_ORIGINS must list origins such as https://app.example.com, separated by commas (got "${raw}")`);
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
    consoleEnabled: bool('CONSOLE_ENABLED', true),
    sessionTtlDays: int('SESSION_TTL_DAYS', 30, 1, 365),
    cookieSecure: bool('COOKIE_SECURE', nodeEnv === 'production'),
    graphqlDepthLimit: int('GRAPHQL_DEPTH_LIMIT', 10, 2, 50),
    introspection: bool('GRAPHQL_INTROSPECTION', nodeEnv !== 'production'),
    jsonBodyLimitBytes: int('JSON_BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    logLevel: oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    logPretty: env.LOG_PRETTY ? bool('LOG_PRETTY', false) : null,
    openai: null,
    rerank: null,
    embedding: { provider: 'local', model: 'universal-sentence-encoder', dimension: 512, batchSize: 64 },
    embeddingQueryCache: int('EMBEDDING_QUERY_CACHE', 1000, 0, 1_000_000),
    storage: { kind: 'local', dir: path.join(dataDir, 'files') },
    publicUrl: '',
    uploadMaxBytes: int('UPLOAD_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    allowPrivateUrls: bool('ALLOW_PRIVATE_URLS', false),
    models: {
      model_3_5_turbo: env.MODEL_3_5_TURBO || 'gpt-4o-mini',
      model_3_5_turbo_16k: env.MODEL_3_5_TURBO_16K || 'gpt-4o-mini',
      model_4: env.MODEL_4 || 'gpt-4o',
      model_4_32k: env.MODEL_4_32K || 'gpt-4o',
      vision: env.VISION_MODEL || null,
      transcription: env.TRANSCRIPTION_MODEL || null,
    },
    limits: {
      storedTokens: int('DEFAULT_STORED_TOKEN_LIMIT', 10_000_000, 0, Number.MAX_SAFE_INTEGER),
      crawlPages: int('DEFAULT_CRAWL_PAGE_LIMIT', 25, 1, 100_000),
      queriesPerMonth: int('DEFAULT_MONTHLY_QUERY_LIMIT', 10_000, 0, Number.MAX_SAFE_INTEGER),
    },
    rateLimits: {
      perVisitorPerMinute: int('RATE_LIMIT_VISITOR_PER_MINUTE', 30, 1, 100_000),
      perIpPerMinute: int('RATE_LIMIT_IP_PER_MINUTE', 120, 1, 1_000_000),
    },
    jobs: {
      // pg-boss refuses heartbeats under 10 s.
      heartbeatSeconds: int('JOB_HEARTBEAT_SECONDS', 60, 10, 3600),
      superviseSeconds: int('QUEUE_SUPERVISE_SECONDS', 60, 1, 3600),
      retryDelaySeconds: int('JOB_RETRY_DELAY_SECONDS', 5, 1, 3600),
      retryLimit: int('JOB_RETRY_LIMIT', 3, 0, 100),
      // A live worker whose job awaits something that never settles keeps beating: its progress is watched instead (src/queue/watchdog.ts).
      stallSeconds: int('JOB_STALL_SECONDS', 300, 0, 86_400),
    },
    corsOrigins: Object.freeze(corsOrigins),
    metrics: {
      enabled: bool('METRICS_ENABLED', true),
      token: env.METRICS_TOKEN || null,
      port: env.METRICS_PORT ? int('METRICS_PORT', 0, 1, 65535) : null,
    },
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    graphqlBudgets: {
      maxAliases: int('GRAPHQL_MAX_ALIASES', 15, 0, 1000),
      maxDirectives: int('GRAPHQL_MAX_DIRECTIVES', 50, 0, 1000),
      maxTokens: int('GRAPHQL_MAX_TOKENS', 2000, 100, 100_000),
      maxCost: int('GRAPHQL_MAX_COST', 20_000, 100, 10_000_000),
      modelCallCost: int('GRAPHQL_MODEL_CALL_COST', 5000, 1, 10_000_000),
      anonymousModelCalls: int('GRAPHQL_ANONYMOUS_MODEL_CALLS', 1, 1, 100),
    },
    authRates: {
      signUpsPerHour: int('RATE_LIMIT_SIGNUP_PER_HOUR', 20, 1, 1_000_000),
      signInsPerMinute: int('RATE_LIMIT_SIGNIN_PER_MINUTE', 30, 1, 1_000_000),
    },
    trustProxyProto: bool('TRUST_PROXY_PROTO', false),
    modelTimeoutMs: int('MODEL_TIMEOUT_MS', 60_000, 100, 3_600_000),
    stalledSweepSeconds: int('STALLED_SWEEP_SECONDS', 60, 0, 86_400),
  };
  const mutable = config as { -readonly [K in keyof Config]: Config[K] };
  mutable.publicUrl = (env.PUBLIC_URL || `http://localhost:${config.port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(mutable.publicUrl)) problems.push(`PUBLIC_URL must be an http(s) URL (got "${env.PUBLIC_URL}")`);

  if (env.OPENAI_BASE_URL || env.OPENAI_API_KEY) {
    mutable.openai = {
      baseUrl: (env.OPENAI_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, ''),
      apiKey: env.OPENAI_API_KEY || 'not-needed',
      maxSockets: int('MODEL_MAX_SOCKETS', 4096, 1, 1_000_000),
    };
  }
  if (env.RERANK_URL) {
    if (!/^https?:\/\/[^/]+/.test(env.RERANK_URL)) problems.push(`RERANK_URL must be an http(s) URL of a rerank endpoint (got "${env.RERANK_URL}")`);
    mutable.rerank = { url: env.RERANK_URL, model: env.RERANK_MODEL || null, apiKey: env.RERANK_API_KEY || null };
  }
  if (env.EMBEDDING_MODEL) {
    if (!mutable.openai) problems.push('EMBEDDING_MODEL needs OPENAI_BASE_URL or OPENAI_API_KEY (an OpenAI-compatible endpoint)');
    mutable.embedding = {
      provider: 'openai',
      model: env.EMBEDDING_MODEL,
      dimension: int('EMBEDDING_DIMENSION', 1536, 1, 16000),
      batchSize: int('EMBEDDING_BATCH_SIZE', 256, 1, 2048),
    };
  }
  if (env.GCS_BUCKET) {
    mutable.storage = {
      kind: 'gcs',
      bucket: env.GCS_BUCKET,
      apiEndpoint: env.GCS_API_ENDPOINT || null,
      projectId: env.GCS_PROJECT_ID || null,
    };
  }

  if (config.metrics.port !== null && config.metrics.port === config.port) problems.push(`METRICS_PORT must differ from PORT (both are ${config.port}); leave it unset to serve /metrics on the main port`);
  if (config.metrics.token !== null && !/^[\x21-\x7e]+$/.test(config.metrics.token)) problems.push('METRICS_TOKEN must be printable ASCII without spaces (it is sent as a bearer token)');

  if (problems.length) throw new ConfigError(problems);
  return Object.freeze(config);
}
