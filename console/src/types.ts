/** The answers of the gateway's APIs the console reads (docs/api.md), as far as it uses them. */

export interface Self {
  id: string;
  username: string;
  role: 'admin' | 'user';
  group: string;
  account_id: string;
  /** Available: the balance minus open reservations. */
  quota: number;
  used_quota: number;
  balance: number;
  reserved_quota: number;
}

export interface Page<T> {
  items: T[];
  total?: number;
  page: number;
  page_size: number;
}

export interface Token {
  id: string;
  name: string;
  /** `sk-****abcd` in listings; the full key only in the answer that created it. */
  key: string;
  status: 1 | 2;
  expired_time: number;
  remain_quota: number;
  unlimited_quota: boolean;
  used_quota: number;
  model_limits: string[];
  group: string;
  /** IP addresses or CIDR ranges the key may be used from; empty: anywhere. */
  allow_ips: string[];
  channel_id: string | null;
  /** Requests per minute; null: the gateway's default (RATE_LIMIT_PER_MINUTE); 0: no limit. */
  rate_limit_per_minute: number | null;
  created_time: number;
}

export interface PriceEntry {
  model: string;
  unit: string;
  price: number;
  tiers: Record<string, number>;
  extras: Record<string, number>;
}

export interface PriceList {
  group: string;
  group_ratio_permille: number;
  models: PriceEntry[];
}

export type TaskStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

export interface TaskResult {
  /** image, video, audio or text. */
  kind: string;
  url: string | null;
  content_type: string | null;
  text: string | null;
}

export interface TaskSummary {
  id: string;
  family: string;
  action: string;
  model: string;
  prompt: string | null;
  status: TaskStatus;
  progress: number;
  created_at: string;
  completed_at: string | null;
  reserved: number;
  charged: number | null;
  error: { code: string; message: string } | null;
  results: TaskResult[];
  assets_expire_at: string | null;
  callback_url: string | null;
  sync: boolean;
}

/** A task as administrators list them across users (`/api/admin/tasks`). */
export interface AdminTask extends TaskSummary {
  account_id: string;
  token_id: string | null;
  channel_id: string | null;
}

export interface CallbackRecord {
  task_id: string;
  url: string;
  state: 'pending' | 'delivered' | 'dead';
  next_attempt_at: string | null;
  attempts: { attempt: number; at: string; status: number; latency_ms: number; error: string | null }[];
}

export type LedgerType = 'QuotaCredited' | 'QuotaReserved' | 'QuotaSettled' | 'QuotaReleased' | 'QuotaDebited';

export interface LedgerEntry {
  id: string;
  type: LedgerType;
  at: string;
  position: string;
  task_id: string | null;
  model: string | null;
  amount: number;
  balance_delta: number;
  reserved_delta: number;
  note: string | null;
}

export interface WebhookSecret {
  secret: string;
  scheme: string;
}

export interface UserRecord {
  id: string;
  username: string;
  role: 'admin' | 'user';
  group: string;
  account_id: string;
}

/** Disabled: refused at login, on its sessions and keys (403 `user_disabled`); deleted: for good. */
export type UserStatus = 'enabled' | 'disabled' | 'deleted';

/** A user as administrators list them (`/api/user/`, `/api/user/:id`), with their account's figures. */
export interface AdminUser extends UserRecord {
  status: UserStatus;
  disabled_reason: string | null;
  /** Available: the balance minus open reservations. */
  quota: number;
  used_quota: number;
  balance: number;
  reserved_quota: number;
  created_at: string;
}

/** What a credit or a debit leaves on the account (`/api/admin/credits`, `/api/admin/debits`). */
export interface BalanceAnswer {
  account_id: string;
  balance: number;
  available: number;
}

/** One of the signed-in user's sessions (`/api/user/self/sessions`): never the cookie itself. */
export interface SessionInfo {
  /** The first 12 hex characters of the session's hash. */
  id: string;
  current: boolean;
  started_at: string | null;
  /** Unix seconds. */
  expires_at: number;
}

export interface Channel {
  id: string;
  name: string;
  family: string;
  base_url: string;
  key_set: boolean;
  models: string[];
  model_mapping: Record<string, string>;
  groups: string[];
  priority: number;
  weight: number;
  status: 1 | 2;
  created_at: string;
  updated_at: string;
  /** Added by the channel health work: rendered whatever its shape when present. */
  health?: unknown;
}

export interface ModelPrice {
  unit: string;
  price: number;
  tiers?: Record<string, number>;
  extras?: Record<string, number>;
}

export interface PriceTable {
  models: Record<string, ModelPrice>;
  group_ratios: Record<string, number>;
}

export interface Metrics {
  projection_position: string;
  event_store_head: string;
  final_event_lag_ms: { count: number; p50: number | null; p99: number | null; max: number | null };
  tasks_in_flight: { submitted: number; dispatched: number };
  memory: { rss: number; heap_used: number };
}

export interface Readiness {
  status: string;
  checks?: Record<string, unknown>;
  processes?: Record<string, { last_pass: string | null }>;
}

/** One event of `/api/events/stream` (docs/events.md). */
export interface LiveEvent {
  id: string;
  type: string;
  key: string;
  stream: string;
  position: string;
  time: string;
  accountId: string;
  data: Record<string, unknown> | null;
}

/** One series' sums (`/api/usage`, `/api/admin/usage`): a model, or an API key (`-`: none). */
export interface UsageTotal {
  key: string;
  /** The model, or the key's name as it is now; null once the key was deleted, and for `-`. */
  name: string | null;
  charged: number;
  tasks: number;
}

/** Usage by model or by key, per UTC hour or day (docs/api.md, "Usage by model and by key"). */
export interface Usage {
  bucket: 'hour' | 'day';
  group_by: 'model' | 'key';
  from: string;
  to: string;
  series: { key: string; name: string | null; points: { at: string; charged: number; tasks: number }[] }[];
  totals: UsageTotal[];
  /** `/api/admin/usage` only: whose, or null for everyone. */
  user_id?: string | null;
}
