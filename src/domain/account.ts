/**
 * The account aggregate (stream `account-<accountId>`): quota credited, reserved for tasks,
 * settled at the actual cost, released, or debited.
 *
 *   balance   = credits − settled charges − debits
 *   reserved  = sum of open reservations
 *   available = balance − reserved, never below zero
 *
 * Per token it also keeps what is reserved and what was charged, so a reservation made with a
 * token that has a cap is refused in the same decision as the balance check: parallel submits
 * can not together take a token past its cap (the token view would only see them afterwards).
 *
 * Every command is idempotent by its id (credit, debit, reservation), so a retried command
 * decides `[]` instead of charging twice.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventDataOf, EventOf, PriceBasis } from './events.js';
import { Refusal, Throttled } from './refusal.js';

export type AccountEvent = EventOf<'AccountOpened' | 'QuotaCredited' | 'QuotaReserved' | 'QuotaSettled' | 'QuotaReleased' | 'QuotaDebited'>;

export type OpenReservation = Readonly<{ amount: number; taskId: string; model: string; tokenId?: string }>;

/**
 * A token's share of the account: `reserved` = its open reservations, `used` = what settled
 * charges naming it came to (the same sum the tokens view projects as `usedQuota`).
 */
export type TokenUsage = Readonly<{ reserved: number; used: number }>;

export type AccountState = Readonly<{
  opened: boolean;
  accountId: string;
  userId: string;
  group: string;
  balance: number;
  reserved: number;
  /** Settled charges plus debits: what the account has spent. */
  usedQuota: number;
  openReservations: ReadonlyMap<string, OpenReservation>;
  /** By token id; derived from the tokenId the reservation events already carry. */
  tokenUsage: ReadonlyMap<string, TokenUsage>;
  /** Settled or released: a second settle/release of these decides `[]`. */
  closedReservationIds: ReadonlySet<string>;
  seenCreditIds: ReadonlySet<string>;
  seenDebitIds: ReadonlySet<string>;
}>;

export type AccountView = Readonly<{ balance: number; reserved: number; available: number; usedQuota: number }>;

export type OpenAccount = Command<'OpenAccount', EventDataOf<'AccountOpened'>>;
export type CreditQuota = Command<'CreditQuota', EventDataOf<'QuotaCredited'>>;
/**
 * `tokenQuotaLimit`: what the token may have charged in all, settled charges and open
 * reservations together (projections/tokens.ts `tokenQuotaLimit`); absent for an unlimited
 * token or none. `maxOpenReservations`: how many tasks the account may have in flight
 * (MAX_TASKS_IN_FLIGHT_PER_ACCOUNT); absent for no limit. Both bound the decision only and are
 * not recorded in the event.
 */
export type ReserveQuota = Command<'ReserveQuota', EventDataOf<'QuotaReserved'> & { tokenQuotaLimit?: number; maxOpenReservations?: number }>;
/** `actual` is what the result cost; it may exceed the reservation. */
export type SettleQuota = Command<'SettleQuota', { reservationId: string; actual: number; basis?: PriceBasis; deliveredUnits?: number }>;
export type ReleaseQuota = Command<'ReleaseQuota', { reservationId: string; reason: string }>;
export type DebitQuota = Command<'DebitQuota', EventDataOf<'QuotaDebited'>>;
export type AccountCommand = OpenAccount | CreditQuota | ReserveQuota | SettleQuota | ReleaseQuota | DebitQuota;

// ---- refusals ----

/** A task takes seconds to minutes: a client told to come back sooner than this would only be refused again. */
const TASKS_IN_FLIGHT_RETRY_AFTER_SECONDS = 5;

/** The reservation would take the API key past its cap (its settled charges plus open reservations). */
export function tokenQuotaExhausted(remaining: number, needed: number): Refusal {
  return new Refusal('forbidden', 'token_quota_exhausted', `Authorization: the API key has ${remaining} quota left, ${needed} needed`, 'Authorization');
}

/** Settling or releasing a reservation the account does not hold: its settler or releaser is wrong, not the client. */
const unknownReservation = (reservationId: string): Refusal => new Refusal('internal', 'unknown_reservation', `unknown reservation ${reservationId}`);

/**
 * A reservation id reused for a different amount (`reservation_amount_differs`), or after it was
 * settled or released (`reservation_closed`): the idempotent submit (engine/tasks/idempotency.ts)
 * tells the two apart by their codes.
 */
const reservationConflict = (reservationId: string, reason: 'amount-differs' | 'already-closed'): Refusal =>
  new Refusal(
    'internal',
    reason === 'amount-differs' ? 'reservation_amount_differs' : 'reservation_closed',
    `reservation ${reservationId} conflicts: ${reason}`,
  );

const insufficientQuota = (available: number, requested: number): Refusal =>
  new Refusal('insufficient_quota', 'insufficient_quota', `quota: ${requested} needed, ${available} available`);

/** A programming error, not a refusal: amounts are checked where they are computed. */
export class InvalidQuotaAmountError extends RangeError {
  constructor(
    readonly field: string,
    readonly value: number,
    readonly min: 0 | 1,
  ) {
    super(`${field} must be a ${min === 1 ? 'positive' : 'non-negative'} integer, got ${value}`);
    this.name = 'InvalidQuotaAmountError';
  }
}

// ---- decide ----

export function initialAccountState(): AccountState {
  return {
    opened: false,
    accountId: '',
    userId: '',
    group: '',
    balance: 0,
    reserved: 0,
    usedQuota: 0,
    openReservations: new Map(),
    tokenUsage: new Map(),
    closedReservationIds: new Set(),
    seenCreditIds: new Set(),
    seenDebitIds: new Set(),
  };
}

const noUsage: TokenUsage = { reserved: 0, used: 0 };

export function tokenUsageOf(state: AccountState, tokenId: string | undefined): TokenUsage {
  return (tokenId === undefined ? undefined : state.tokenUsage.get(tokenId)) ?? noUsage;
}

function availableOf(state: AccountState): number {
  return state.balance - state.reserved;
}

export function decideAccount(command: AccountCommand, state: AccountState): AccountEvent[] {
  // Accounts are opened with their user: a command for one never opened is the gateway's fault.
  if (command.type !== 'OpenAccount' && !state.opened) throw new Refusal('internal', 'account_not_open', `account is not open (${command.type})`);
  switch (command.type) {
    case 'OpenAccount':
      return state.opened ? [] : [{ type: 'AccountOpened', data: { ...command.data } }];
    case 'CreditQuota':
      return credit(command.data, state);
    case 'ReserveQuota':
      return reserve(command.data, state);
    case 'SettleQuota':
      return settle(command.data, state);
    case 'ReleaseQuota':
      return release(command.data, state);
    case 'DebitQuota':
      return debit(command.data, state);
    default:
      return assertNever(command, 'account command');
  }
}

function credit(data: CreditQuota['data'], state: AccountState): AccountEvent[] {
  requireQuota('amount', data.amount, 1);
  if (state.seenCreditIds.has(data.creditId)) return [];
  return [{ type: 'QuotaCredited', data: { ...data } }];
}

function reserve(data: ReserveQuota['data'], state: AccountState): AccountEvent[] {
  requireQuota('reservation amount', data.amount, 0);
  const existing = state.openReservations.get(data.reservationId);
  if (existing) {
    if (existing.amount === data.amount) return [];
    throw reservationConflict(data.reservationId, 'amount-differs');
  }
  // Reopening a settled or released id would let a late retry reserve (and charge) twice.
  if (state.closedReservationIds.has(data.reservationId)) {
    throw reservationConflict(data.reservationId, 'already-closed');
  }
  // The token first, as the HTTP layer checked it before: a capped token's refusal is a 403.
  const { tokenQuotaLimit, maxOpenReservations, ...eventData } = data;
  if (tokenQuotaLimit !== undefined) {
    requireQuota('token quota limit', tokenQuotaLimit, 0);
    const usage = tokenUsageOf(state, data.tokenId);
    const remaining = tokenQuotaLimit - usage.used - usage.reserved;
    if (data.amount > remaining) throw tokenQuotaExhausted(Math.max(0, remaining), data.amount);
  }
  const available = availableOf(state);
  if (data.amount > available) throw insufficientQuota(available, data.amount);
  // Last: the refusals above stand until someone acts, this one passes as tasks complete.
  // Decided here, on the stream every instance appends to with its expected revision, the
  // count is exact under parallel submits across instances.
  if (maxOpenReservations !== undefined && maxOpenReservations > 0 && state.openReservations.size >= maxOpenReservations) {
    throw new Throttled(
      'too_many_tasks_in_flight',
      `tasks: the account already has ${maxOpenReservations} tasks in flight, the most it may; retry when one completes`,
      TASKS_IN_FLIGHT_RETRY_AFTER_SECONDS,
    );
  }
  return [{ type: 'QuotaReserved', data: eventData }];
}

function settle(data: SettleQuota['data'], state: AccountState): AccountEvent[] {
  requireQuota('actual', data.actual, 0);
  if (state.closedReservationIds.has(data.reservationId)) return [];
  const reservation = state.openReservations.get(data.reservationId);
  if (!reservation) throw unknownReservation(data.reservationId);
  // The result may cost more than was reserved: the excess comes from the available balance,
  // as far as it goes, so available never drops below zero.
  const charged = Math.min(data.actual, reservation.amount + availableOf(state));
  return [
    {
      type: 'QuotaSettled',
      data: {
        reservationId: data.reservationId,
        taskId: reservation.taskId,
        reserved: reservation.amount,
        actual: data.actual,
        charged,
        ...(data.basis ? { basis: data.basis } : {}),
        ...(data.deliveredUnits !== undefined ? { deliveredUnits: data.deliveredUnits } : {}),
        ...(reservation.tokenId !== undefined ? { tokenId: reservation.tokenId } : {}),
      },
    },
  ];
}

function release(data: ReleaseQuota['data'], state: AccountState): AccountEvent[] {
  if (state.closedReservationIds.has(data.reservationId)) return [];
  const reservation = state.openReservations.get(data.reservationId);
  if (!reservation) throw unknownReservation(data.reservationId);
  return [
    {
      type: 'QuotaReleased',
      data: {
        reservationId: data.reservationId,
        taskId: reservation.taskId,
        amount: reservation.amount,
        reason: data.reason,
        ...(reservation.tokenId !== undefined ? { tokenId: reservation.tokenId } : {}),
        model: reservation.model,
      },
    },
  ];
}

function debit(data: DebitQuota['data'], state: AccountState): AccountEvent[] {
  requireQuota('amount', data.amount, 1);
  if (state.seenDebitIds.has(data.debitId)) return [];
  const available = availableOf(state);
  // Never into what is reserved: tasks in flight keep what they hold.
  if (data.amount > available) {
    throw new Refusal(
      'insufficient_quota',
      'insufficient_quota',
      `amount: ${data.amount} is more than the ${available} available (the balance less what is reserved)`,
      'amount',
    );
  }
  return [{ type: 'QuotaDebited', data: { ...data } }];
}

function requireQuota(field: string, value: number, min: 0 | 1): void {
  if (!Number.isSafeInteger(value) || value < min) throw new InvalidQuotaAmountError(field, value, min);
}

// ---- evolve ----
// A long-lived account collects many ids; copying the sets on every event would make a
// replay quadratic. So one mutable draft is applied in place: `evolve` copies once per event,
// `foldAccount` copies once per replay. Neither mutates the state it was given.

type AccountDraft = {
  -readonly [K in keyof AccountState]: AccountState[K];
} & {
  openReservations: Map<string, OpenReservation>;
  tokenUsage: Map<string, TokenUsage>;
  closedReservationIds: Set<string>;
  seenCreditIds: Set<string>;
  seenDebitIds: Set<string>;
};

export function mutableAccountState(state: AccountState = initialAccountState()): MutableAccountState {
  return {
    ...state,
    openReservations: new Map(state.openReservations),
    // Usage values are replaced, never changed in place, so sharing them with `state` is safe.
    tokenUsage: new Map(state.tokenUsage),
    closedReservationIds: new Set(state.closedReservationIds),
    seenCreditIds: new Set(state.seenCreditIds),
    seenDebitIds: new Set(state.seenDebitIds),
  };
}

/**
 * Applies one recorded event. Never throws: a duplicate that slipped into the stream is
 * absorbed exactly as decide would have refused it; other streams' events are ignored.
 */
function applyInPlace(draft: AccountDraft, event: DomainEvent): void {
  switch (event.type) {
    case 'AccountOpened':
      if (draft.opened) return;
      draft.opened = true;
      draft.accountId = event.data.accountId;
      draft.userId = event.data.userId;
      draft.group = event.data.group;
      return;
    case 'QuotaCredited':
      if (draft.seenCreditIds.has(event.data.creditId)) return;
      draft.seenCreditIds.add(event.data.creditId);
      draft.balance += event.data.amount;
      return;
    case 'QuotaReserved': {
      const { reservationId, amount, taskId, model, tokenId } = event.data;
      if (draft.openReservations.has(reservationId) || draft.closedReservationIds.has(reservationId)) return;
      draft.openReservations.set(reservationId, { amount, taskId, model, ...(tokenId !== undefined ? { tokenId } : {}) });
      draft.reserved += amount;
      addTokenUsage(draft, tokenId, amount, 0);
      return;
    }
    case 'QuotaSettled':
      if (!closeReservation(draft, event.data.reservationId)) return;
      draft.balance -= event.data.charged;
      draft.usedQuota += event.data.charged;
      // Charged to the token the event names, exactly as the tokens view counts it.
      addTokenUsage(draft, event.data.tokenId, 0, event.data.charged);
      return;
    case 'QuotaReleased':
      closeReservation(draft, event.data.reservationId);
      return;
    case 'QuotaDebited':
      if (draft.seenDebitIds.has(event.data.debitId)) return;
      draft.seenDebitIds.add(event.data.debitId);
      draft.balance -= event.data.amount;
      draft.usedQuota += event.data.amount;
      return;
    case 'AccountSnapshotted':
      // Closing the books changes no figure (the audit checks that it agrees with this fold);
      // it bounds the closed reservation ids remembered, exactly as a load from it does
      // (account-snapshot.ts), so replay and load decide alike.
      draft.closedReservationIds = new Set(event.data.recentlyClosedReservationIds);
      return;
    case 'AccountSnapshotPartWritten':
      // Only the last part closes the books (its parts are the events just before it); the
      // others, and the parts of an attempt cut short, change nothing.
      if (event.data.summary) draft.closedReservationIds = new Set(event.data.summary.recentlyClosedReservationIds);
      return;
    default:
      return;
  }
}

/** Moves a reservation from open to closed; false when it was already closed. */
function closeReservation(draft: AccountDraft, reservationId: string): boolean {
  if (draft.closedReservationIds.has(reservationId)) return false;
  const reservation = draft.openReservations.get(reservationId);
  if (reservation) {
    draft.reserved -= reservation.amount;
    addTokenUsage(draft, reservation.tokenId, -reservation.amount, 0);
    draft.openReservations.delete(reservationId);
  }
  draft.closedReservationIds.add(reservationId);
  return true;
}

function addTokenUsage(draft: AccountDraft, tokenId: string | undefined, reserved: number, used: number): void {
  if (tokenId === undefined || (reserved === 0 && used === 0)) return;
  const current = draft.tokenUsage.get(tokenId) ?? noUsage;
  draft.tokenUsage.set(tokenId, { reserved: current.reserved + reserved, used: current.used + used });
}

/** Accepts any catalog event so a handler can fold what it read without narrowing first. */
export function evolveAccount(state: AccountState, event: DomainEvent): AccountState {
  return foldAccount([event], state);
}

export function foldAccount(events: Iterable<DomainEvent>, from: AccountState = initialAccountState()): AccountState {
  const draft = mutableAccountState(from);
  applyAccountEvents(draft, events);
  return draft;
}

/**
 * A state its owner may change in place: the account service keeps one per cached account and
 * folds each decision into it without copying (a long-lived account holds many closed ids).
 * The owner must drop it when an append of what it folded fails.
 */
export type MutableAccountState = AccountDraft;

export function applyAccountEvents(state: MutableAccountState, events: Iterable<DomainEvent>): void {
  for (const event of events) applyInPlace(state, event);
}

/**
 * Applies events in place and returns what takes them back out: the account service folds a
 * batch's decisions into its cached state as it decides them, and when the append conflicts it
 * undoes them and catches up with only the events other writers appended (a copy of the state
 * per batch would cost as much as the state is large; this costs as much as the batch).
 *
 * An event changes the figures and, in the maps and sets, only the entries its own ids name
 * (reservation, token, credit, debit), or replaces the closed ids as a whole (a snapshot): those
 * are recorded before it is applied, and restored newest first.
 */
export function applyAccountEventsUndoably(state: MutableAccountState, events: Iterable<DomainEvent>): () => void {
  const undo: (() => void)[] = [];
  for (const event of events) {
    undo.push(restorerOf(state, event));
    applyInPlace(state, event);
  }
  return () => {
    for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
  };
}

function restorerOf(state: MutableAccountState, event: DomainEvent): () => void {
  const { opened, accountId, userId, group, balance, reserved, usedQuota, closedReservationIds } = state;
  // Only the ids matter here, whichever account event it is (other events change nothing).
  const data = event.data as Readonly<Record<string, unknown>>;
  const reservationId = typeof data.reservationId === 'string' ? data.reservationId : undefined;
  const creditId = typeof data.creditId === 'string' ? data.creditId : undefined;
  const debitId = typeof data.debitId === 'string' ? data.debitId : undefined;
  const open = reservationId === undefined ? undefined : state.openReservations.get(reservationId);
  const wasClosed = reservationId !== undefined && closedReservationIds.has(reservationId);
  // Closing a reservation moves its own token's figures; a settle charges the token its event names.
  const tokenIds = new Set([open?.tokenId, typeof data.tokenId === 'string' ? data.tokenId : undefined].filter((t) => t !== undefined));
  const usages = [...tokenIds].map((tokenId) => [tokenId, state.tokenUsage.get(tokenId)] as const);
  const creditSeen = creditId !== undefined && state.seenCreditIds.has(creditId);
  const debitSeen = debitId !== undefined && state.seenDebitIds.has(debitId);
  return () => {
    Object.assign(state, { opened, accountId, userId, group, balance, reserved, usedQuota, closedReservationIds });
    if (reservationId !== undefined) {
      if (open) state.openReservations.set(reservationId, open);
      else state.openReservations.delete(reservationId);
      if (!wasClosed) closedReservationIds.delete(reservationId);
    }
    for (const [tokenId, usage] of usages) {
      if (usage) state.tokenUsage.set(tokenId, usage);
      else state.tokenUsage.delete(tokenId);
    }
    if (creditId !== undefined && !creditSeen) state.seenCreditIds.delete(creditId);
    if (debitId !== undefined && !debitSeen) state.seenDebitIds.delete(debitId);
  };
}

export function accountView(state: AccountState): AccountView {
  return { balance: state.balance, reserved: state.reserved, available: availableOf(state), usedQuota: state.usedQuota };
}

export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = {
  decide: decideAccount,
  evolve: evolveAccount,
  initialState: initialAccountState,
};
