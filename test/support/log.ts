import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.ts';

/** The service's own logger, writing its JSON lines into memory for a test to read. */
export function memoryLog(level: 'debug' | 'info' = 'debug') {
  let text = '';
  const destination = new Writable({
    write(chunk, _enc, done) {
      text += chunk;
      done();
    },
  });
  const logger = createLogger(level, { destination });
  return {
    logger,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, any>),
  };
}
