/**
 * Delivers a completed submission to its form's webhook: one POST of JSON, signed with the
 * form's secret, retried with exponential backoff until it is answered 2xx. Idempotent: a
 * submission already delivered is not sent again; receivers should still de-duplicate by
 * submissionId, since a crash between their 2xx and our record means one more delivery.
 */
import { createHmac } from 'node:crypto';
import type { Job, QueueOptions } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Orm } from '../db/orm.ts';
import type { Logger } from '../logger.ts';
import { FetchError, safeFetch } from '../providers/safe-fetch.ts';
import type { Queue } from '../queue/queue.ts';
import { FormSubmission, FormSubmissionStatus } from './form.entity.ts';
import { FORM_WEBHOOK_QUEUE, type FormWebhookJobData } from './form.service.ts';

export const SIGNATURE_HEADER = 'X-Agentbase-Signature';
const TIMEOUT_MS = 10_000;

export const FORM_WEBHOOK_QUEUE_OPTIONS = {
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  retryDelayMax: 600,
  expireInSeconds: 60,
};

/** The webhook queue as configured: JOB_RETRY_DELAY_SECONDS is the first delay, doubling after each failure. */
export function formWebhookQueueOptions(config: Pick<Config, 'jobs'>): QueueOptions {
  return { ...FORM_WEBHOOK_QUEUE_OPTIONS, retryDelay: config.jobs.retryDelaySeconds };
}

export interface FormWebhookDeps {
  config: Config;
  orm: Orm;
  queue: Queue;
  logger: Logger;
}

export async function startFormWebhookWorkers(deps: FormWebhookDeps, opts: { concurrency?: number; pollingIntervalSeconds?: number } = {}) {
  return deps.queue.work<FormWebhookJobData>(
    FORM_WEBHOOK_QUEUE,
    { localConcurrency: opts.concurrency ?? 2, pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 0.5 },
    (job) => deliverFormWebhook(deps, job),
  );
}

/** `sha256=` and the hex HMAC-SHA256 of the raw body, keyed with the form's webhook secret. */
export function signWebhook(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** Throws (so pg-boss retries) when the receiver did not answer 2xx and another attempt may succeed. */
export async function deliverFormWebhook(deps: FormWebhookDeps, job: Job<FormWebhookJobData> & { retryLimit?: number }): Promise<void> {
  const em = deps.orm.em.fork();
  const submission = await em.findOne(FormSubmission, job.data.submissionId, { populate: ['form'] });
  // Deleted meanwhile, or already delivered by an earlier attempt: nothing to do.
  if (!submission || submission.status !== FormSubmissionStatus.completed || submission.webhookDeliveredAt) return;
  const form = submission.form;
  if (!form.webhookUrl) return;

  // sentAt is inside the signed body: a receiver refuses old deliveries to stop replays.
  const body = JSON.stringify({
    formId: form.id,
    submissionId: submission.id,
    conversationId: submission.conversation.id,
    values: submission.values,
    completedAt: submission.completedAt?.toISOString() ?? null,
    sentAt: new Date().toISOString(),
  });
  submission.webhookAttempts += 1;
  try {
    await safeFetch(form.webhookUrl, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        [SIGNATURE_HEADER.toLowerCase()]: signWebhook(form.webhookSecret, body),
        'x-agentbase-delivery': job.id,
      },
      userAgent: 'agentbase-webhook/1.0',
      accept: 'application/json, */*',
      allowPrivate: deps.config.allowPrivateUrls,
      timeoutMs: TIMEOUT_MS,
      maxRedirects: 0,
      maxBytes: 64 * 1024,
      signal: job.signal,
    });
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    // These are only raised after a 2xx status: the receiver took the delivery; its answer does not matter.
    if (err.code !== 'TOO_LARGE' && err.code !== 'UNSUPPORTED_CONTENT') {
      submission.webhookError = err.message.slice(0, 1000);
      await em.flush();
      const permanent = err.code === 'BAD_URL' || err.code === 'PRIVATE_ADDRESS';
      deps.logger.warn('form webhook failed', { submissionId: submission.id, attempt: job.retryCount, permanent, error: err.message });
      if (permanent) return; // another attempt would be refused the same way
      throw err; // pg-boss retries with backoff, up to retryLimit
    }
  }
  submission.webhookDeliveredAt = new Date();
  submission.webhookError = null;
  await em.flush();
}
