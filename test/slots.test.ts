import { describe, expect, it } from 'vitest';
import { Slots } from '../src/slots.ts';

describe('Slots', () => {
  it('never runs more than max at once, even when newcomers arrive as a slot is released', async () => {
    const slots = new Slots(2);
    let now = 0;
    let peak = 0;
    const work = async () => {
      peak = Math.max(peak, ++now);
      await new Promise((r) => setTimeout(r, 5));
      now--;
    };
    const first = Array.from({ length: 6 }, () => slots.run(work));
    // Newcomers timed to land right after releases.
    const late = Array.from({ length: 6 }, (_, i) => new Promise((r) => setTimeout(r, 5 + i)).then(() => slots.run(work)));
    await Promise.all([...first, ...late]);
    expect(peak).toBe(2);
  });

  it('refuses past maxWaiting with the given error, and frees the slot of work that throws', async () => {
    const slots = new Slots(1, 1, () => new Error('busy'));
    let release!: () => void;
    const holding = slots.run(() => new Promise<void>((r) => (release = r)));
    const queued = slots.run(async () => 'queued');
    await expect(slots.run(async () => 'third')).rejects.toThrow('busy');
    release();
    await holding;
    expect(await queued).toBe('queued');
    await expect(slots.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slots.run(async () => 'after')).toBe('after');
  });
});
