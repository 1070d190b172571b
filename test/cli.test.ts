/** The commands a new user runs: setup (a key without a dashboard), migrate, start/stop. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { http } from './support/client.ts';
import { createTestDatabase } from './support/app.ts';
import { root, runScript as run } from './support/process.ts';
import { lockDataDir } from '../src/db/lock.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir() {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentbase-cli-'));
  dirs.push(dir);
  return dir;
}

/** Starts `npm start`, waits for its listening line, returns the port and a stopper. */
function startServer(env: Record<string, string>): Promise<{ port: number; stop: () => Promise<number | null>; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', 'src/main.ts'], { cwd: root, // NODE_ENV=production as deployed: Apollo installs signal handlers outside `test` (they once raced ours).
    env: { ...process.env, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1', ...env } });
    let output = '';
    const stop = () => new Promise<number | null>((r) => { child.once('close', (code) => r(code)); child.kill('SIGTERM'); });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => {
      output += d;
      const m = /"url":"http:\/\/localhost:(\d+)"/.exec(output);
      if (m) resolve({ port: Number(m[1]), stop, output: () => output });
    });
    child.on('close', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

const lastJsonLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!);

describe('npm run setup', () => {
  it('creates an organization, a user and an API key that works, printing one JSON line last', async () => {
    const dataDir = tempDir();
    const db = await createTestDatabase();
    const env = { DATA_DIR: dataDir, ...(db.url.startsWith('postgres') ? { DATABASE_URL: db.url } : {}) };
    try {
      const setup = await run('setup', ['--org', 'Acme', '--email', 'admin@acme.test', '--json'], env);
      expect(setup.code, setup.stderr).toBe(0);
      const result = lastJsonLine(setup.stdout);
      expect(Object.keys(result).sort()).toEqual(['apiKey', 'organizationId', 'password', 'userId']);
      expect(result.apiKey).toMatch(/^ak_/);
      expect(result.password.length).toBeGreaterThanOrEqual(16);

      // With --password, and a second organization; a taken email is refused clearly.
      const again = await run('setup', ['--org', 'Acme', '--email', 'admin@acme.test', '--json'], env);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/already exists/);
      const chosen = await run('setup', ['--org', 'Globex', '--email', 'ops@globex.test', '--password', 'chosen-password', '--json'], env);
      expect(lastJsonLine(chosen.stdout).password).toBe('chosen-password');

      // The key and the password work against the server started on the same data.
      const server = await startServer(env);
      try {
        // Start-up says which universal processor capabilities work here, and why others do not.
        const capabilities = server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((l) => l.msg === 'universal processor');
        expect(capabilities).toMatchObject({ ocr: expect.stringMatching(/^yes/), chat: expect.stringMatching(/^no: No model endpoint is configured/) });
        const me = await http('POST', `http://127.0.0.1:${server.port}/graphql`, { token: result.apiKey, body: { query: '{ me { organization { id name } } }' } });
        expect(me.body.data.me.organization).toEqual({ id: result.organizationId, name: 'Acme' });
        const login = await http('POST', `http://127.0.0.1:${server.port}/graphql`, { body: { query: `mutation { login(input: { email: "ops@globex.test", password: "chosen-password" }) { token } }` } });
        expect(login.body.data.login.token).toMatch(/^st_/);
        if (!db.url.startsWith('postgres')) {
          // The embedded database is one process's: setup refuses while the server runs.
          const busy = await run('setup', ['--org', 'Busy', '--email', 'busy@x.test', '--json'], env);
          expect(busy.code).toBe(1);
          expect(busy.stderr).toMatch(/in use by process \d+ \(is the server running\?\)/);
        }
      } finally {
        expect(await server.stop()).toBe(0);
      }
    } finally {
      await db.drop();
    }
  }, 120_000);

  it('explains its usage when arguments are missing', async () => {
    const res = await run('setup', ['--org', 'NoEmail'], { DATA_DIR: tempDir() });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--org and --email are required/);
  });
});

describe('start-up', () => {
  it('lists every bad environment variable at once and exits non-zero', async () => {
    const res = await run('start', [], { PORT: 'eighty', DATABASE_URL: 'mysql://x', ROLE: 'boss', DATA_DIR: tempDir() });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('PORT must be a whole number');
    expect(res.stderr).toContain('DATABASE_URL must start with postgres://');
    expect(res.stderr).toContain('ROLE must be one of all, api, worker');
  });

  it('npm run migrate applies migrations once', async () => {
    const env = { DATA_DIR: tempDir() };
    const first = await run('migrate', [], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/Applied Migration20261122000000Foundation, Migration20261122010000Ingestion, Migration20261122020000Conversations/);
    const second = await run('migrate', [], env);
    expect(second.stdout).toMatch(/up to date/);
  }, 60_000);
});

const started: ChildProcess[] = [];
// A failed assertion must not leave a server behind holding a port and a data folder.
afterAll(() => started.forEach((npm) => npm.exitCode === null && npm.signalCode === null && npm.kill('SIGTERM')));

/** `npm start` as a user or a supervisor runs it: the signals below go to npm's pid, not node's. */
function npmStart(dataDir: string): Promise<{ npm: ChildProcess; port: number; output: () => string }> {
  return new Promise((resolve, reject) => {
    const npm = spawn('npm', ['start'], { cwd: root, env: { ...process.env, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: '' } });
    started.push(npm);
    let output = '';
    const seen = (d: Buffer) => {
      output += d;
      const m = /"url":"http:\/\/localhost:(\d+)"/.exec(output);
      if (m) resolve({ npm, port: Number(m[1]), output: () => output });
    };
    npm.stdout!.on('data', seen);
    npm.stderr!.on('data', seen);
    npm.on('close', (code) => reject(new Error(`npm start exited with ${code}: ${output}`)));
  });
}

const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

describe('npm start stops on a signal sent to npm', () => {
  it('SIGTERM and SIGINT each stop the server within 10 s, free the port and release the embedded database', async () => {
    const dataDir = tempDir();
    const pidFile = path.join(dataDir, 'pglite', 'agentbase.pid'); // the embedded database's lock
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = await npmStart(dataDir);
      expect((await http('GET', `http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
      expect(existsSync(pidFile)).toBe(true);

      const exited = new Promise<{ code: number | null; ms: number }>((resolve) => {
        const sent = Date.now();
        server.npm.once('exit', (code) => resolve({ code, ms: Date.now() - sent }));
      });
      server.npm.kill(signal);
      const { code, ms } = await Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`npm start still running 10 s after ${signal}`)), 10_000))]);
      expect(code, server.output()).toBe(0);
      expect(ms).toBeLessThan(10_000);
      expect(await portIsFree(server.port), `port ${server.port} still taken after ${signal}`).toBe(true);
      expect(existsSync(pidFile)).toBe(false);
    }

    // The next start on the same data folder is not told "in use by process N".
    const again = await npmStart(dataDir);
    expect((await http('GET', `http://127.0.0.1:${again.port}/healthz`)).status).toBe(200);
    expect(again.output()).not.toMatch(/in use by process/);
    const exited = new Promise((r) => again.npm.once('exit', r));
    again.npm.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);
});

describe('the embedded database lock', () => {
  /** Processes that each try to lock `dir` at the same instant, then hold it for a second. */
  function contenders(dir: string, count: number): Promise<string[]> {
    const lockModule = path.join(root, 'src/db/lock.ts');
    const script = `
      const { lockDataDir } = await import(${JSON.stringify(lockModule)});
      const at = Number(process.argv[1]);
      while (Date.now() < at) {}
      try { lockDataDir(process.argv[2]); console.log('won ' + process.pid); await new Promise((r) => setTimeout(r, 1000)); }
      catch (err) { console.log('lost ' + err.message); }`;
    const at = Date.now() + 3000; // every contender has loaded the module by then
    return Promise.all(
      Array.from({ length: count }, () => new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', '--input-type=module', '-e', script, String(at), dir], { cwd: root });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('error', reject);
        child.on('close', () => resolve(out.trim()));
      })),
    );
  }

  const deadPid = async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => child.on('exit', r));
    return child.pid!;
  };

  it('of processes locking at the same instant, exactly one wins; the others name it', async () => {
    const dir = tempDir();
    const results = await contenders(dir, 4);
    const winners = results.filter((r) => r.startsWith('won '));
    expect(winners, results.join('\n')).toHaveLength(1);
    const winner = winners[0]!.slice(4);
    for (const r of results.filter((r) => !r.startsWith('won '))) {
      expect(r).toBe(`lost The embedded database in ${dir} is in use by process ${winner} (is the server running?). Stop it first, or set DATABASE_URL to a PostgreSQL server.`);
    }
  }, 30_000);

  it('never has two holders: four processes locking and releasing as fast as they can, five times each', async () => {
    // A check-then-write lock lets two processes in now and then under this load; an exclusive one never.
    const dir = tempDir();
    const lockModule = path.join(root, 'src/db/lock.ts');
    const script = `
      import { rmSync, writeFileSync } from 'node:fs';
      const { lockDataDir } = await import(${JSON.stringify(lockModule)});
      const [at, dir] = [Number(process.argv[1]), process.argv[2]];
      const marker = dir + '/holder';
      while (Date.now() < at) {}
      let wins = 0, overlaps = 0;
      // Until this process has held the lock 5 times (or 40 s pass on a very loaded machine).
      for (const until = Date.now() + 40_000; wins < 5 && Date.now() < until; ) {
        let release;
        try { release = lockDataDir(dir); } catch { continue; }
        wins++;
        try { writeFileSync(marker, '', { flag: 'wx' }); } catch { overlaps++; }
        for (let i = 0; i < 200; i++) writeFileSync(marker, String(i));
        rmSync(marker, { force: true });
        release();
      }
      console.log(JSON.stringify({ wins, overlaps }));`;
    // Start together once all four have loaded (slow under a loaded CI machine).
    const at = Date.now() + 6000;
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => new Promise<{ wins: number; overlaps: number }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', '@swc-node/register/esm-register', '--input-type=module', '-e', script, String(at), dir], { cwd: root });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('close', () => { try { resolve(JSON.parse(out.trim().split('\n').at(-1)!)); } catch { reject(new Error(out)); } });
      })),
    );
    // Hand-overs between all four contenders (up to 20; fewer only if the machine was starved for 40 s).
    expect(runs.every((r) => r.wins >= 1)).toBe(true);
    expect(runs.reduce((n, r) => n + r.wins, 0)).toBeGreaterThanOrEqual(12);
    expect(runs.map((r) => r.overlaps)).toEqual([0, 0, 0, 0]);
  }, 60_000);

  it('a pid file left by a dead process is taken over, by exactly one of several at once', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'agentbase.pid'), String(await deadPid()));
    const results = await contenders(dir, 4);
    expect(results.filter((r) => r.startsWith('won ')), results.join('\n')).toHaveLength(1);

    // And in this process: a stale file is taken over, release removes it, a live holder refuses.
    writeFileSync(path.join(dir, 'agentbase.pid'), String(await deadPid()));
    const release = lockDataDir(dir);
    expect(readFileSync(path.join(dir, 'agentbase.pid'), 'utf8')).toBe(String(process.pid));
    release();
    expect(existsSync(path.join(dir, 'agentbase.pid'))).toBe(false);
    writeFileSync(path.join(dir, 'agentbase.pid'), String(process.ppid));
    expect(() => lockDataDir(dir)).toThrow(`The embedded database in ${dir} is in use by process ${process.ppid} (is the server running?)`);
  }, 30_000);
});
