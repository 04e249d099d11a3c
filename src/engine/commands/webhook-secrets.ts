/**
 * Per-account signing secrets for completion callbacks (Standard Webhooks `whsec_` keys), kept
 * on the stream `webhooks-<accountId>` (domain/webhook-secret.ts): the user reads and rotates
 * theirs through the API, and an account that never asked gets one on its first callback.
 */
import { randomBytes } from 'node:crypto';
import { streams } from '../../domain/events.js';
import { webhookSecretDecider, type WebhookSecretCommand } from '../../domain/webhook-secret.js';
import type { EventStore } from '../../ports/event-store.js';
import { executeCommand } from './command-handler.js';

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The secret in force after the command. */
async function execute(events: EventStore, accountId: string, command: WebhookSecretCommand, at: Date): Promise<string> {
  const result = await executeCommand({
    events,
    stream: streams.webhooks(accountId),
    decider: webhookSecretDecider,
    command,
    metadata: { at: at.toISOString(), accountId },
  });
  if (result.state.secret === null) throw new Error(`account ${accountId}: no webhook secret after ${command.type}`);
  return result.state.secret;
}

export async function rotateWebhookSecret(events: EventStore, accountId: string, at: Date): Promise<string> {
  return execute(events, accountId, { type: 'RotateWebhookSecret', data: { secret: newSecret() } }, at);
}

/** The account's secret, created on first use — once, even when two deliveries race for it. */
export async function webhookSecretFor(events: EventStore, accountId: string, at: Date): Promise<string> {
  return execute(events, accountId, { type: 'EnsureWebhookSecret', data: { secret: newSecret() } }, at);
}
