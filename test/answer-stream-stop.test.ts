/**
 * A graphql-sse client that unsubscribes from `agentQueryStream` (the chat's Stop button) ends
 * the model call on the server: the stream is gone, so nobody would read the rest.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { gql, newOrganization } from './support/client.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './support/openai-server.ts';
import { waitFor } from './support/wait.ts';

let app: TestApp;
let model: OpenAiTestServer;

beforeAll(async () => {
  model = await startOpenAiTestServer();
  app = await startTestApp({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test-key' });
});

afterAll(async () => {
  await app?.close();
  await model?.close();
});

it('unsubscribing from a streamed answer over graphql-sse aborts the model call', async () => {
  const org = await newOrganization(app.url, 'Stops');
  const agent = (await gql(app.url, `mutation { createAgent(input: { name: "Talker" }) { id } }`, {}, { token: org.apiKey })).data.createAgent.id;
  model.setChatFault({ endless: 'more ' });
  try {
    const client = createClient({ url: `${app.url}/graphql/stream`, headers: { authorization: `Bearer ${org.apiKey}` }, retryAttempts: 0 });
    let texts = 0;
    let stop!: () => void;
    await new Promise<void>((resolve, reject) => {
      stop = client.subscribe(
        { query: `subscription($id: ID!) { agentQueryStream(id: $id, input: { query: "go on" }) { type text } }`, variables: { id: agent } },
        { next: () => void (++texts === 3 && resolve()), error: reject, complete: () => reject(new Error('an endless answer completed')) },
      );
    });
    const before = model.aborted();
    expect(model.chatInFlight()).toBe(1);
    stop();
    await model.whenAborted(before + 1);
    await waitFor(async () => model.chatInFlight() === 0 || undefined, 5000, 'the model request to be closed');
    client.dispose();
  } finally {
    model.setChatFault(null);
  }
});
