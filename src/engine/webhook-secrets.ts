/**
 * Per-account signing secrets for completion callbacks (Standard Webhooks `whsec_` keys), kept
 * on the stream `webhooks-<accountId>`: the user reads and rotates theirs through the API, and
 * an account that never asked gets one on its first callback.
 */
import { randomBytes } from 'node:crypto';
import { streams } from '../domain/events.js';
import { toDomainEvent } from '../domain/recorded.js';
import { WrongExpectedRevisionError, type EventStore } from '../ports/event-store.js';
import { appendEvents } from './append.js';

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export async function currentWebhookSecret(events: EventStore, accountId: string): Promise<string | undefined> {
  const recorded = await events.readStream(streams.webhooks(accountId));
  for (let i = recorded.length - 1; i >= 0; i--) {
    const e = toDomainEvent(recorded[i]!);
    if (e?.type === 'WebhookSecretRotated') return e.data.secret;
  }
  return undefined;
}

export async function rotateWebhookSecret(events: EventStore, accountId: string, at: Date): Promise<string> {
  const secret = newSecret();
  await appendEvents(events, streams.webhooks(accountId), [{ type: 'WebhookSecretRotated', data: { secret } }], { expectedRevision: 'any', metadata: { at: at.toISOString(), accountId } });
  return secret;
}

/** The account's secret, created on first use — once, even when two deliveries race for it. */
export async function webhookSecretFor(events: EventStore, accountId: string, at: Date): Promise<string> {
  const current = await currentWebhookSecret(events, accountId);
  if (current) return current;
  const secret = newSecret();
  try {
    await appendEvents(events, streams.webhooks(accountId), [{ type: 'WebhookSecretRotated', data: { secret } }], { expectedRevision: 'no_stream', metadata: { at: at.toISOString(), accountId } });
    return secret;
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
    return (await currentWebhookSecret(events, accountId))!;
  }
}
