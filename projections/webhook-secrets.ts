import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

/** The signing secret in force for an account's callbacks. */
export interface WebhookSecretDoc {
  secret: string;
  rotatedAt: string;
}

export const webhookSecretsProjection: Projection<WebhookSecretDoc> = {
  name: 'webhook-secrets',
  view: VIEWS.webhookSecrets,
  handles: ['WebhookSecretRotated'],
  documentId: (e) => e.streamName.slice('webhooks-'.length),
  evolve: (_doc, e) => (e.type === 'WebhookSecretRotated' ? { secret: e.data.secret, rotatedAt: e.metadata.at } : undefined),
};
