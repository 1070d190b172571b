/**
 * The extractive answerer's second "nothing found" check: a question asking for a kind of value
 * (a colour, a price, a year, a name...) is not answered by a quote that holds none, even when the
 * retrieved passage is about the question's subject. The recogniser is measured on eval/
 * (docs/evaluation.md); here, its forms one by one, then the answer through the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askedKinds, holdsKind } from '../src/answers/answer-type.ts';
import { NOTHING_FOUND_ANSWER, QUOTE_NOTE, RELEVANT_SCORE } from '../src/answers/extractive.ts';
import { gql, http, newOrganization } from './support/client.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { waitFor } from './support/wait.ts';

describe('the kind of value a question asks for', () => {
  it('is read from the question form; yes/no and open questions ask for none', () => {
    expect(askedKinds('What colour is the Aurora K2 kettle?')).toEqual(['colour']);
    expect(askedKinds('How much does a parking space cost?')).toContain('money');
    expect(askedKinds('What is the price of the Orbit S8?')).toContain('money');
    expect(askedKinds('How much water does the kettle hold?')).toEqual(['number']);
    expect(askedKinds('How many rooms does the hotel have?')).toEqual(['count']);
    expect(askedKinds('How many times can I renew a book?')).toEqual(['frequency', 'count']);
    expect(askedKinds('How big is the reservoir?')).toEqual(['length', 'area', 'weight']);
    expect(askedKinds('How deep is the canal?')).toEqual(['length', 'weight']);
    expect(askedKinds('How many kilometres of cycle lanes are there?')).toEqual(['length']);
    expect(askedKinds('When was the lighthouse built?')).toEqual(['year']);
    expect(askedKinds('When is the library open on Saturdays?')).toContain('time');
    expect(askedKinds('How long is the warranty?')).toContain('duration');
    expect(askedKinds('What does the router weigh?')).toEqual(['weight']);
    expect(askedKinds('What is the top speed of the e-bikes?')).toEqual(['speed']);
    expect(askedKinds('Who founded the company?')).toEqual(['person']);
    expect(askedKinds('Does the router support mesh networking?')).toBeNull();
    expect(askedKinds('Can I pay in instalments?')).toBeNull();
    expect(askedKinds('What is the sick leave policy?')).toBeNull();
    expect(askedKinds('Where is the finish of the marathon?')).toBeNull();
  });

  it('is found in a passage in its usual written forms', () => {
    expect(holdsKind('The ring turns orange while heating.', ['colour'])).toBe(true);
    expect(holdsKind('The kettle holds 1.7 litres.', ['colour'])).toBe(false);
    expect(holdsKind('Adult tickets cost 14 dollars.', ['money'])).toBe(true);
    expect(holdsKind('A ticket costs €9.', ['money'])).toBe(true);
    expect(holdsKind('Children are seen free of charge.', ['money'])).toBe(true);
    expect(holdsKind('Set no-go zones around thresholds higher than 2 centimetres.', ['money'])).toBe(false);
    expect(holdsKind('It was built in 1852.', ['year'])).toBe(true);
    expect(holdsKind('It opens from 9 am to 8 pm.', ['year'])).toBe(false);
    expect(holdsKind('Members elect the board for two-year terms.', ['duration'])).toBe(true);
    expect(holdsKind('The jacket weighs 390 grams.', ['weight'])).toBe(true);
    // "How small are the particles?": microns and micrometres are lengths too.
    expect(holdsKind('The filter catches particles as small as 0.3 microns.', ['length'])).toBe(true);
    expect(holdsKind('Pores of 2 µm let water through.', ['length'])).toBe(true);
    expect(holdsKind('The filter catches most particles.', ['length'])).toBe(false);
    expect(holdsKind('The range is about 60 kilometres.', ['speed'])).toBe(false);
    expect(holdsKind('Sport mode limits the speed to 25 km/h.', ['speed'])).toBe(true);
    // "How fast does the drill spin?": a rotational speed.
    expect(holdsKind('The chuck turns at up to 1,600 rpm in second gear.', ['speed'])).toBe(true);
    expect(holdsKind('The support desk is staffed from nine in the morning.', ['time'])).toBe(true);
    // "How big is the reservoir?": an area; "How deep is the canal?" is not answered by one.
    expect(holdsKind('The reservoir covers 74 acres.', ['area'])).toBe(true);
    expect(holdsKind('The reservoir covers 74 acres.', ['length', 'weight'])).toBe(false);
    expect(holdsKind('The largest specimen sold for 38,000 crowns.', ['money'])).toBe(true);
  });

  it('a count is a figure that is not a measure, a price or a date', () => {
    expect(holdsKind('The hotel has 40 rooms.', ['count'])).toBe(true);
    expect(holdsKind('Mirewood has a population of 11,500.', ['count'])).toBe(true);
    expect(holdsKind('The female lays three to five eggs.', ['count'])).toBe(true);
    // "How many staff work at the clinic?" is not answered by these.
    expect(holdsKind('Most patients benefit from a visit every six months.', ['count'])).toBe(false);
    expect(holdsKind('A full plot measures 250 square metres and a half plot 125 square metres; the rent of 48 pounds is due on 1 October.', ['count'])).toBe(false);
    expect(holdsKind('Submit the claim within 30 days, with a photo of each receipt.', ['count'])).toBe(false);
    expect(holdsKind('Lessons cost £12 and start at 9 am.', ['count'])).toBe(false);
  });

  it('a person is a name or a role the question does not name itself', () => {
    expect(holdsKind('The lighthouse was built by the engineer Mathilde Orsay.', ['person'], 'Who built the lighthouse?')).toBe(true);
    expect(holdsKind('Trips abroad need the approval of the finance director.', ['person'], 'Who approves trips abroad?')).toBe(true);
    // Only the question's own names, and a role the question itself asks about, are not an answer.
    expect(holdsKind('This policy applies to all employees of Tallowmere Ltd and the company.', ['person'], 'Who founded the company Tallowmere Ltd?')).toBe(false);
    expect(holdsKind('Sunhill Primary School takes children from four. The school has 60 places.', ['person'], 'Who is the head teacher of Sunhill Primary School?')).toBe(false);
  });
});

describe('the answer without a model', () => {
  let app: TestApp;
  let apiKey: string;
  let datastoreId: string;
  let agentId: string;
  const MANUAL =
    '# Aurora K2 Kettle\n\nThe Aurora K2 kettle holds 1.7 litres of water. It boils a full kettle in about four minutes and switches itself off when the water boils.';

  beforeAll(async () => {
    app = await startTestApp();
    apiKey = (await newOrganization(app.url, 'Kinds')).apiKey;
    datastoreId = (await gql(app.url, `mutation { createDatastore(input: { name: "Manuals" }) { id } }`, {}, { token: apiKey })).data.createDatastore.id;
    const d = await http('POST', `${app.api}/datasources`, { token: apiKey, body: { datastoreId, type: 'text', name: 'kettle', text: MANUAL } });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    await waitFor(async () => (await gql(app.url, `query($id: ID!) { datasource(id: $id) { status } }`, { id: d.body.id }, { token: apiKey })).data.datasource.status === 'synched', 60_000);
    agentId = (await gql(app.url, `mutation($d: [ID!]) { createAgent(input: { name: "K", datastoreIds: $d }) { id } }`, { d: [datastoreId] }, { token: apiKey })).data.createAgent.id;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  const ask = async (query: string) => (await http('POST', `${app.api}/agents/${agentId}/query`, { token: apiKey, body: { query } })).body.answer as string;

  it('quotes a passage that holds the kind of value asked, and says "nothing found" when the passage about the subject holds none', async () => {
    expect(await ask('How much water does the Aurora K2 kettle hold?')).toContain('1.7 litres');
    // The manual is found for the question (its score passes the first check)...
    const found = await http('POST', `${app.api}/datastores/${datastoreId}/query`, { token: apiKey, body: { query: 'What colour is the Aurora K2 kettle?' } });
    expect(found.body[0].score).toBeGreaterThanOrEqual(RELEVANT_SCORE);
    // ...but names no colour, so it is not quoted as an answer.
    expect(await ask('What colour is the Aurora K2 kettle?')).toBe(NOTHING_FOUND_ANSWER);
    expect(await ask('How much does the Aurora K2 kettle cost?')).toBe(NOTHING_FOUND_ANSWER);
    expect(await ask('How long does the Aurora K2 kettle take to boil?')).toMatch(new RegExp(`four minutes[^]*${QUOTE_NOTE}`));
  });
});
