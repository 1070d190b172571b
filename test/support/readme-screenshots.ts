/**
 * `npm run screenshots`: after the console's browser tests have written test/screenshots/ (kept out
 * of git), copies the few the README shows into docs/screenshots/ (committed), so the pictures in
 * the README are of the console as it is now. Add a name here to show another page.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const README_SCREENSHOTS = ['datastore', 'playground', 'graphiql'];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const from = path.join(root, 'test/screenshots');
const to = path.join(root, 'docs/screenshots');

const missing = README_SCREENSHOTS.filter((name) => !existsSync(path.join(from, `${name}.png`)));
if (missing.length) {
  console.error(`No screenshot ${missing.map((n) => `test/screenshots/${n}.png`).join(', ')}: run the console's browser tests first (npm run screenshots does).`);
  process.exit(1);
}
mkdirSync(to, { recursive: true });
for (const name of README_SCREENSHOTS) copyFileSync(path.join(from, `${name}.png`), path.join(to, `${name}.png`));
console.info(`docs/screenshots/: ${README_SCREENSHOTS.map((n) => `${n}.png`).join(', ')}`);
