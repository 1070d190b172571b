/**
 * npm run bench:rest — GET /agents/{id} requests per second (autocannon, 50 connections, 10 s)
 * next to a bare node:http hello world measured in the same run. Target: ratio >= 0.25.
 */
import { load, spawnServer } from './support.ts';

const duration = Number(process.env.BENCH_DURATION ?? 10);

async function post(url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return (await res.json()) as any;
}

const hello = await spawnServer('bench/hello.ts');
const baseline = await load(hello.url, { duration });
await hello.stop();

const app = await spawnServer('bench/serve-app.ts');
const signUp = await post(`${app.url}/graphql`, {
  query: `mutation { signUp(input: { email: "bench@example.test", password: "bench-password", organizationName: "Bench" }) { token } }`,
});
const token = signUp.data.signUp.token;
const agent = await post(`${app.url}/graphql`, { query: `mutation { createAgent(input: { name: "Bench", description: "Benchmark agent", visibility: public, handle: "bench" }) { id } }` }, token);
const id = agent.data.createAgent.id;
const check = await fetch(`${app.url}/api/agents/${id}`);
if (check.status !== 200) throw new Error(`GET /api/agents/${id} answered ${check.status}`);

await load(`${app.url}/api/agents/${id}`, { duration: 2 }); // warm-up (JIT, connection pool)
const anonymous = await load(`${app.url}/api/agents/${id}`, { duration });
const withKey = await load(`${app.url}/api/agents/${id}`, { duration, headers: { authorization: `Bearer ${token}` } });
await app.stop();

const row = (name: string, r: typeof baseline) =>
  `${name.padEnd(44)} ${r.requestsPerSec.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(3)} ms   p99 ${String(r.p99).padStart(3)} ms   errors ${r.errors + r.non2xx}`;
console.log(`database: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}; ${duration} s, 50 connections`);
console.log(row('node:http hello world (baseline)', baseline));
console.log(row('GET /api/agents/{id} anonymous', anonymous));
console.log(row('GET /api/agents/{id} with a session token', withKey));
console.log(`ratio anonymous / baseline: ${(anonymous.requestsPerSec / baseline.requestsPerSec).toFixed(2)} (target >= 0.25)`);
console.log(`ratio with token / baseline: ${(withKey.requestsPerSec / baseline.requestsPerSec).toFixed(2)}`);
