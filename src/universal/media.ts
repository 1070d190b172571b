/**
 * Runs one media extraction (image, audio, video) in a fresh child process with a deadline
 * and a memory cap, and kills it (with any ffmpeg it started) past either. A process rather
 * than a worker thread: the image library, the OCR engine's WebAssembly heap and ffmpeg allocate outside V8's
 * heap, where a thread's `resourceLimits` cannot reach, and a native crash must end only the
 * job. The cap is enforced on the child's resident memory (polled), besides V8's heap limit.
 */
// Forks our own media-worker.ts (not an outside program), so this stays here rather than in providers/.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Slots } from '../slots.ts';
import type { MediaErrorCode, MediaJob, MediaReply, MediaResult } from './protocol.ts';

export class MediaError extends Error {
  constructor(
    readonly code: MediaErrorCode | 'BUSY',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'MediaError';
  }
}

export interface MediaLimits {
  timeoutMs: number;
  /** Resident memory of the child process, in MB. */
  maxMemoryMb: number;
}

// Under `npm start` and vitest this file is TypeScript, and so is the child's entry: it
// starts with the same TypeScript hook. After `tsc` both are .js and need nothing.
const IS_TS = import.meta.url.endsWith('.ts');
const ENTRY = fileURLToPath(new URL(IS_TS ? './media-worker.ts' : './media-worker.js', import.meta.url));
const SWC_REGISTER = '@swc-node/register/esm-register';

function execArgv(heapMb: number): string[] {
  const args = [`--max-old-space-size=${heapMb}`, '--no-warnings'];
  if (!IS_TS) return args;
  let register = SWC_REGISTER;
  try {
    register = import.meta.resolve(SWC_REGISTER);
  } catch {
    // Left bare: resolved from the working directory, which is the project under npm scripts.
  }
  return ['--import', register, ...args];
}

/** Jobs running at once (each may use its memory cap) and waiting; past that, BUSY. */
const MAX_RUNNING = Math.max(1, Math.min(2, availableParallelism()));
const MAX_WAITING = 32;
const slots = new Slots(MAX_RUNNING, MAX_WAITING, () => new MediaError('BUSY', 'The file processor is busy; try again in a minute.'));

const MEMORY_POLL_MS = 50;

/** Resident set size of a process in MB (Linux); null where /proc is not there. */
function residentMb(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

/** The child and everything it started (it leads its own process group). */
function killAll(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** Throws MediaError (CORRUPT, TOO_LARGE, TIMEOUT, BUSY) for what the file causes; anything else is a fault of ours. */
export function runMediaJob(job: Omit<MediaJob, 'deadlineMs'>, limits: MediaLimits): Promise<MediaResult> {
  return slots.run(() => runChild(job, limits));
}

function runChild(job: Omit<MediaJob, 'deadlineMs'>, limits: MediaLimits): Promise<MediaResult> {
  // V8's heap is a part of the cap; the rest is for libvips, WebAssembly and buffers.
  const heapMb = Math.max(64, Math.min(512, Math.floor(limits.maxMemoryMb / 2)));
  const child = fork(ENTRY, [], {
    execArgv: execArgv(heapMb),
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8000);
  });
  const seconds = Math.round(limits.timeoutMs / 100) / 10;

  return new Promise<MediaResult>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watch);
      outcome();
      // The answer is in: whatever is still running (OCR, ffmpeg) goes with the group.
      if (child.exitCode === null && child.signalCode === null) setTimeout(() => killAll(child), 2000).unref();
    };
    const fail = (code: MediaErrorCode, message: string, cause?: unknown) => settle(() => reject(new MediaError(code, message, cause === undefined ? undefined : { cause })));

    const timer = setTimeout(() => {
      killAll(child);
      fail('TIMEOUT', `The file took too long to process (over ${seconds} s).`);
    }, limits.timeoutMs);
    const watch = setInterval(() => {
      if (child.pid === undefined) return;
      const mb = residentMb(child.pid);
      if (mb !== null && mb > limits.maxMemoryMb) {
        killAll(child);
        fail('TOO_LARGE', 'The file is too large to process: it needs too much memory.', new Error(`resident memory ${Math.round(mb)} MB > ${limits.maxMemoryMb} MB`));
      }
    }, MEMORY_POLL_MS);

    child.on('message', (reply: MediaReply) => {
      if (reply.ok) return settle(() => resolve(reply.result));
      const cause = reply.detail ? Object.assign(new Error(reply.detail.split('\n', 1)[0]), { stack: reply.detail }) : undefined;
      if (reply.code === 'TIMEOUT') return fail('TIMEOUT', `The file took too long to process (over ${seconds} s).`, cause);
      if (reply.code) return fail(reply.code, reply.message, cause);
      settle(() => reject(new Error(reply.message, { cause })));
    });
    child.on('error', (error) => settle(() => reject(new Error('The media process could not be started.', { cause: error }))));
    child.on('exit', () => killAll(child)); // ffmpeg started by a child that died
    // 'close' (not 'exit'): by then every message the child sent has been read.
    child.on('close', (code, signal) => {
      if (settled) return;
      const detail = new Error(`media process exited (${code ?? signal}) without a result: ${stderr.trim().slice(-2000)}`);
      if (/heap out of memory|Allocation failed|std::bad_alloc|Cannot allocate memory/i.test(stderr)) {
        return fail('TOO_LARGE', 'The file is too large to process: it needs too much memory.', detail);
      }
      // A native crash (SIGSEGV in a decoder, an abort) is caused by the file's bytes.
      fail('CORRUPT', 'The file could not be read: its decoder failed.', detail);
    });

    child.send({ ...job, deadlineMs: limits.timeoutMs + 2000 } satisfies MediaJob, (error) => {
      if (error) {
        killAll(child);
        settle(() => reject(new Error('The media process did not take the job.', { cause: error })));
      }
    });
  });
}
