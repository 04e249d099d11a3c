/**
 * The name of every view the families share: what its projection writes (`Projection.view`) and
 * what readers ask the view store for. (Each projection's checkpoint has the same name, kept in
 * the projection; a family's own task view is named in its view.ts, read through its projection.)
 */
export const VIEWS = {
  users: 'users',
  sessions: 'sessions',
  tokens: 'tokens',
  channels: 'channels',
  pricing: 'pricing',
  accounts: 'accounts',
  ledger: 'ledger',
  openReservations: 'open-reservations',
  inflight: 'inflight',
  assetExpiry: 'asset-expiry',
  callbacks: 'callbacks',
  webhookSecrets: 'webhook-secrets',
  accountTasks: 'account-tasks',
  syncResults: 'sync-results',
  usage: 'usage',
} as const;
