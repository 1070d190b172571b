/**
 * A question in other words than its document, or naming another subject than the passage that
 * would be quoted (docs/evaluation.md, the fifth pass). Synonyms of a question's words
 * (src/retrieval/synonyms.ts, from WordNet): a fragment holding "warranty" counts for a question
 * asking about the "guarantee", in its score and in the extractive answer. Names: "Can I bring my
 * dog to Ferncliff?" is not answered from the campsite's dog rules. On three documents of the
 * evaluation set, through the service.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedFragments, NOTHING_FOUND_ANSWER, QUOTE_NOTE } from '../src/answers/extractive.ts';
import type { Fragment } from '../src/retrieval/retrieval.service.ts';
import { WORD_WEIGHT } from '../src/answers/answer.inputs.ts';
import { SYNONYM_WEIGHT, synonymsOf } from '../src/retrieval/synonyms.ts';
import { http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { corpusAgent } from './support/ingest.ts';

const corpus = (name: string) => readFileSync(new URL(`../eval/corpus/${name}.md`, import.meta.url), 'utf8');

describe('synonyms of the question\'s words', () => {
  it('are read from WordNet for each content word, in its base form', () => {
    const found = synonymsOf('How long is the guarantee on the H3? Do grown-ups pay more?');
    const of = (word: string) => found.find((e) => e.startsWith(`${word} `))?.split(' ').slice(1) ?? [];
    expect(of('guarantee')).toContain('warranty');
    // "grown-ups": without its hyphen and its plural, WordNet's "grownup", whose sense is "adult".
    expect(of('grown-ups')).toContain('adult');
    // Stop words, figures and words WordNet does not have bring nothing.
    expect(found.some((e) => /^(?:how|is|the|on|do|h3) /.test(e))).toBe(false);
    expect(synonymsOf('Qwxlrt zzzq?')).toEqual([]);
  });
});

describe('the names a question uses', () => {
  const fragment = (text: string): Fragment => ({ text, score: 0.5, source: 'x.md', datasource_id: 'd', datasource_name: 'x.md', page: null, custom_id: null, section: null });
  const campsite = fragment('# Hollowbrook Campsite\n\n## Dogs\n\nUp to two dogs per pitch are welcome.');
  const wall = fragment('# Ferncliff Climbing Centre\n\n## Opening hours\n\nThe wall opens at 9 am on Saturdays.');

  it('keep the fragments that hold the most of them', () => {
    expect(namedFragments('Can I bring my dog to Ferncliff?', [campsite, wall])).toEqual([wall]);
    expect(namedFragments('Are dogs allowed at Hollowbrook?', [campsite, wall])).toEqual([campsite]);
  });

  it('keep every fragment when none holds them, and are not days, months or "I"', () => {
    expect(namedFragments('Can I bring my dog to Larkfield Park?', [campsite, wall])).toEqual([campsite, wall]);
    expect(namedFragments('When does it open on Saturday in May?', [campsite, wall])).toEqual([campsite, wall]);
    expect(namedFragments("Can I bring my dog? I'm staying a week.", [campsite, wall])).toEqual([campsite, wall]);
  });
});

describe('a question in other words than its document, or about another subject', () => {
  let app: TestApp;
  let apiKey: string;
  let datastoreId: string;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp();
    apiKey = (await newOrganization(app.url, 'Synonyms')).apiKey;
    ({ datastoreId, agentId } = await corpusAgent(app, apiKey, ['halcyon-air-purifier', 'ferncliff-climbing', 'hollowbrook-campsite']));
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  it('scores a fragment holding a synonym of a word above one holding neither', async () => {
    // The same query vector for both texts: the scores differ by their share of the query's words only.
    const vector = await app.services.embedder.embedQuery('How long is the warranty?');
    const score = async (query: string) => {
      const found = await app.services.retrieval.searchByVector(app.db.orm.em.fork(), [datastoreId], query, vector, 5);
      return found.find((f) => f.text.includes('two-year warranty'))!.score;
    };
    // Two words ("long", and "guarantee" or a word no chunk and no table has): the synonym counts SYNONYM_WEIGHT of one.
    const withSynonym = await score('How long is the guarantee?');
    const without = await score('How long is the qwxlrt?');
    expect(SYNONYM_WEIGHT).toBeGreaterThan(0);
    expect(withSynonym - without).toBeCloseTo(((WORD_WEIGHT / (1 + WORD_WEIGHT)) * SYNONYM_WEIGHT) / 2, 5);
  });

  it('takes words whose only synonyms are stop words ("beneath": "below")', async () => {
    const res = await http('POST', `${app.api}/datastores/${datastoreId}/query`, { token: apiKey, body: { query: 'What is beneath the filter, apiece, if cancelled?' } });
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThan(0);
  });

  it('answers without a model from the sentence that holds the synonym', async () => {
    const ask = async (query: string) => (await http('POST', `${app.api}/agents/${agentId}/query`, { token: apiKey, body: { query } })).body.answer as string;
    // The manual says "warranty" and "adults": without synonyms, other sentences were quoted first.
    expect(await ask('How long is the guarantee on the purifier?')).toMatch(new RegExp(`^"The purifier comes with a two-year warranty[^]*${QUOTE_NOTE}`));
    expect(await ask('What does a day pass cost for grown-ups?')).toMatch(new RegExp(`^"A day pass costs 14 pounds for adults[^]*${QUOTE_NOTE}`));
  });

  it('does not answer a question about one place from another place\'s passage', async () => {
    const ask = async (query: string) => (await http('POST', `${app.api}/agents/${agentId}/query`, { token: apiKey, body: { query } })).body.answer as string;
    // The campsite's dog rules answer a question about the campsite...
    expect(await ask('Can I bring my dog to Hollowbrook?')).toMatch(/two dogs per pitch[^]*hollowbrook-campsite\.md/);
    // ...not one about the climbing wall, whose guide says nothing of dogs.
    expect(await ask('Can I bring my dog to Ferncliff?')).toBe(NOTHING_FOUND_ANSWER);
  });
});
