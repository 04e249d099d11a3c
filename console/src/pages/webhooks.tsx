/**
 * The account's webhook signing secret (`/api/user/webhook-secret`): hidden until asked for,
 * rotated on request — callbacks sent after a rotation are signed with the new one.
 */
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { ActionButton, Card, ErrorLine } from '../components/ui';
import { useLoad } from '../load';
import type { WebhookSecret } from '../types';

export function WebhooksPage() {
  const secret = useLoad(() => get<WebhookSecret>('/api/user/webhook-secret'));
  const [shown, setShown] = useState(false);
  const value = secret.value?.secret ?? '';
  return (
    <Card title="Webhook secret">
      <p class="muted">
        Completion callbacks are signed per Standard Webhooks with this secret (<code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
        <code>webhook-signature</code>). Verify them with any Standard Webhooks library.
      </p>
      <ErrorLine error={secret.error} />
      {secret.value && (
        <div class="secret-row">
          <code data-testid="webhook-secret">{shown ? value : `${value.slice(0, 10)}${'•'.repeat(24)}`}</code>
          <button type="button" onClick={() => setShown(!shown)}>
            {shown ? 'Hide' : 'Show'}
          </button>
          <ActionButton label="Copy" action={() => navigator.clipboard.writeText(value)} />
          <ActionButton
            label="Rotate"
            kind="danger"
            confirm="Rotate the secret? Callbacks sent from now on are signed with the new one; receivers must be given it."
            action={async () => {
              await api<WebhookSecret>('POST', '/api/user/webhook-secret/rotate');
              setShown(true);
              secret.reload();
            }}
            testId="rotate-secret"
          />
        </div>
      )}
    </Card>
  );
}
