import type { Projection } from './projection.js';
import { accountsProjection } from './accounts.js';
import { accountTasksProjection } from './account-tasks.js';
import { channelsProjection } from './channels.js';
import { assetExpiryProjection } from './asset-expiry.js';
import { callbacksProjection } from './callbacks.js';
import { webhookSecretsProjection } from './webhook-secrets.js';
import { inflightProjection } from './inflight.js';
import { ledgerProjection } from './ledger.js';
import { openReservationsProjection } from './open-reservations.js';
import { pricingProjection } from './pricing.js';
import { sessionsProjection } from './sessions.js';
import { tokensProjection } from './tokens.js';
import { usageProjection } from './usage.js';
import { usersProjection } from './users.js';

/** Every projection the gateway runs; families add theirs here. */
export const coreProjections: readonly Projection[] = [
  usersProjection,
  sessionsProjection,
  tokensProjection,
  channelsProjection,
  pricingProjection,
  accountsProjection,
  ledgerProjection,
  openReservationsProjection,
  inflightProjection,
  assetExpiryProjection,
  callbacksProjection,
  webhookSecretsProjection,
  accountTasksProjection,
  usageProjection,
] as Projection[];
