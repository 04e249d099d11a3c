/**
 * An account's callback signing secret (stream `webhooks-<accountId>`). The secret is made by
 * the caller (it is random) and travels in the command, so deciding stays pure.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventOf } from './events.js';

export type WebhookSecretEvent = EventOf<'WebhookSecretRotated'>;

/** `secret`: the one in force, or null when the account never had one. */
export type WebhookSecretState = Readonly<{ secret: string | null }>;

/** Replaces the secret in force (or sets the first). */
export type RotateWebhookSecret = Command<'RotateWebhookSecret', { secret: string }>;
/** Sets `secret` only when the account has none yet: the first delivery's, once, however many race. */
export type EnsureWebhookSecret = Command<'EnsureWebhookSecret', { secret: string }>;
export type WebhookSecretCommand = RotateWebhookSecret | EnsureWebhookSecret;

export function initialWebhookSecretState(): WebhookSecretState {
  return { secret: null };
}

export function decideWebhookSecret(command: WebhookSecretCommand, state: WebhookSecretState): WebhookSecretEvent[] {
  switch (command.type) {
    case 'RotateWebhookSecret':
      return [{ type: 'WebhookSecretRotated', data: { secret: command.data.secret } }];
    case 'EnsureWebhookSecret':
      return state.secret === null ? [{ type: 'WebhookSecretRotated', data: { secret: command.data.secret } }] : [];
    default:
      return assertNever(command, 'webhook secret command');
  }
}

export function evolveWebhookSecret(state: WebhookSecretState, event: DomainEvent): WebhookSecretState {
  return event.type === 'WebhookSecretRotated' ? { secret: event.data.secret } : state;
}

export const webhookSecretDecider: Decider<WebhookSecretState, WebhookSecretCommand, WebhookSecretEvent> = {
  decide: decideWebhookSecret,
  evolve: evolveWebhookSecret,
  initialState: initialWebhookSecretState,
};
