/**
 * A question about a subject the datastore has, asking for a detail it lacks (docs/evaluation.md,
 * the seventh pass). Its subject's fragments score well and a sentence about the subject is close
 * to it, but two things show that none of them answers: the question names something no relevant
 * fragment mentions ("Does the Corvid L2 work with Alexa?"), or it asks whether a thing is there
 * or offered and no quote names the thing ("Does the climbing centre have showers?"). On three
 * documents of the evaluation set, through the service, as a new user's first datastore.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askedThing } from '../src/answers/answer-type.ts';
import { extractiveAnswer, namesThing, NOTHING_FOUND_ANSWER, QUOTE_NOTE, unknownNames } from '../src/answers/extractive.ts';
import type { Fragment } from '../src/retrieval/retrieval.service.ts';
import { http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { corpusAgent } from './support/ingest.ts';
import { readSse, summarize } from './support/sse.ts';

const fragment = (text: string, score = 0.6): Fragment => ({ text, score, source: 'x.md', datasource_id: 'd', datasource_name: 'x.md', page: null, custom_id: null, section: null });

describe('the thing a yes/no question asks is there or offered', () => {
  it('is read from the common forms of the question, without the place or condition after it', () => {
    expect(askedThing('Is there free parking at Ferncliff?')).toBe('parking');
    expect(askedThing('Are there any lockers for bags?')).toBe('lockers');
    expect(askedThing('Does the Hollowbrook campsite have a swimming pool?')).toBe('swimming pool');
    expect(askedThing('Does the Greenleaf co-op sell organic meat?')).toBe('organic meat');
    expect(askedThing('Can I hire a narrowboat on the Kelsham Canal?')).toBe('narrowboat');
  });

  it('is not read from other questions, from "have to", from a rule, or when it is an acronym', () => {
    expect(askedThing('How much is a pitch?')).toBeNull();
    expect(askedThing('Can I bring my dog?')).toBeNull();
    expect(askedThing('Do I have to pay for the showers at Hollowbrook?')).toBeNull();
    // A document may spell it out: "no bank or cash machine".
    expect(askedThing('Is there an ATM on Kestrel Island?')).toBeNull();
    // A rule, which a passage states in its own words ("Guests must be 16 or over"), is not a thing.
    expect(askedThing('Is there a minimum age for guests?')).toBeNull();
    expect(askedThing('Is there a fee for late returns?')).toBeNull();
    expect(askedThing('Are there any discounts for students?')).toBeNull();
  });

  it('is named by a text holding one of its words, a synonym, its start or end, without accents', () => {
    expect(namesThing('Hot showers are free.', 'showers')).toBe(true);
    expect(namesThing('Open fires are not allowed anywhere on the site.', 'campfire')).toBe(true);
    expect(namesThing('The car park is free.', 'parking')).toBe(true);
    expect(namesThing('The café serves coffee.', 'cafe')).toBe(true);
    // WordNet: "guarantee" is a "warranty".
    expect(namesThing('Every unit has a two-year warranty.', 'guarantee')).toBe(true);
    expect(namesThing('Chalk bags are free to borrow.', 'parking')).toBe(false);
  });
});

describe('the names a question uses that no fragment mentions', () => {
  const lock = fragment('# Corvid L2 smart lock\n\n## Setting up the app\n\nInstall the Corvid Home app and hold your phone near the lock.');

  it('are its capitalised words (not days, months, acronyms) found in no fragment, in any case, singular or plural', () => {
    expect(unknownNames('Does the Corvid L2 work with Alexa?', [lock])).toEqual(['Alexa']);
    expect(unknownNames('Does the Corvid L2 work with Apple HomeKit?', [lock])).toEqual(['Apple', 'HomeKit']);
    expect(unknownNames('Can I set up the Corvid L2 on a Monday?', [lock])).toEqual([]);
    expect(unknownNames('Is the corvid L2 app on Phones?', [lock])).toEqual([]);
    expect(unknownNames('Does the Corvid L2 have an NFC reader?', [lock])).toEqual([]);
  });

  it('make the answer "nothing found", saying which names it lacks; without the check it quotes', async () => {
    const embedder = { provider: 'local', model: 'fixed', dimension: 2, embedDocuments: async (t: string[]) => t.map(() => [1, 0]), embedQuery: async () => [1, 0] } as const;
    const answer = await extractiveAnswer('Does the Corvid L2 work with Alexa?', [lock], true, embedder);
    expect(answer).toBe(`${NOTHING_FOUND_ANSWER} It does not mention "Alexa".`);
    expect(await extractiveAnswer('Does the Corvid L2 work with Alexa?', [lock], true, embedder, undefined, { byUnknownName: false })).toContain(QUOTE_NOTE);
  });
});

describe('a question about a detail a small datastore lacks', () => {
  let app: TestApp;
  let apiKey: string;
  let agentId: string;
  const ask = async (query: string) => (await http('POST', `${app.api}/agents/${agentId}/query`, { token: apiKey, body: { query } })).body.answer as string;

  beforeAll(async () => {
    app = await startTestApp();
    apiKey = (await newOrganization(app.url, 'Missing details')).apiKey;
    ({ agentId } = await corpusAgent(app, apiKey, ['corvid-smart-lock', 'ferncliff-climbing', 'hollowbrook-campsite']));
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  it('answers "nothing found" when the question names what no relevant passage mentions, streamed the same way', async () => {
    expect(await ask('Does the Corvid L2 lock work with Alexa?')).toBe(`${NOTHING_FOUND_ANSWER} It does not mention "Alexa".`);
    const res = await fetch(`${app.api}/agents/${agentId}/query`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify({ query: 'Does the Corvid L2 lock work with Alexa?', streaming: true }) });
    const { answer, last } = summarize(await readSse(res));
    expect(answer).toBe(`${NOTHING_FOUND_ANSWER} It does not mention "Alexa".`);
    expect(last).toBe('[DONE]');
  });

  it('answers "nothing found" when no quote names the thing asked for', async () => {
    expect(await ask('Does the climbing centre have showers?')).toBe(NOTHING_FOUND_ANSWER);
    expect(await ask('Is there a playground for kids at Hollowbrook campsite?')).toBe(NOTHING_FOUND_ANSWER);
  });

  it('still answers the same forms of question when the passage names the thing', async () => {
    expect(await ask('Are there showers at Hollowbrook?')).toMatch(new RegExp(`^"Hot showers are free[^]*hollowbrook-campsite\\.md[^]*${QUOTE_NOTE}`));
    expect(await ask('Can I have a campfire at Hollowbrook?')).toMatch(/Open fires are not allowed[^]*hollowbrook-campsite\.md/);
    expect(await ask('Are there lockers at Ferncliff?')).toMatch(/Lockers take a one-pound coin[^]*ferncliff-climbing\.md/);
  });
});
