/**
 * Resident memory of a process as the kernel counts it (/proc, Linux), with the processes it
 * started: a child process's memory is the service's too (worker threads are the process's own).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** A field of /proc/<pid>/status in kB; 0 once the process (a short-lived child) is gone. */
export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The process's descendants: the children of each of its threads, recursively. */
export function descendants(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((task) => {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      return [];
    }
    return children.split(/\s+/).filter(Boolean).map(Number).flatMap((child) => [child, ...descendants(child)]);
  });
}

const kbToMb = (kb: number) => Math.round(kb / 1024);

/** Resident memory of the process and everything it started, MB. */
export const treeResidentMb = (pid: number) => kbToMb([pid, ...descendants(pid)].reduce((sum, p) => sum + statusKb(p, 'VmRSS'), 0));

/**
 * Watches the peak from now on: the whole tree sampled every 100 ms, and between samples the
 * kernel's own high-water mark of the process (VmHWM, reset here through clear_refs) plus its
 * children at the end.
 */
export function watchPeak(pid: number): { stop(): number } {
  let peak = treeResidentMb(pid);
  let reset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    reset = false; // not ours to reset: the samples alone
  }
  const sampler = setInterval(() => (peak = Math.max(peak, treeResidentMb(pid))), 100);
  return {
    stop() {
      clearInterval(sampler);
      const children = Math.max(0, treeResidentMb(pid) - kbToMb(statusKb(pid, 'VmRSS')));
      return Math.max(peak, reset ? kbToMb(statusKb(pid, 'VmHWM')) + children : 0);
    },
  };
}
