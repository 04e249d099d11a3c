import type { PriceBasis } from '../src/domain/events.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export type LedgerEntryType = 'QuotaCredited' | 'QuotaReserved' | 'QuotaSettled' | 'QuotaReleased' | 'QuotaDebited';

/** One line of an account statement; the document id is the event id. */
export interface LedgerEntry {
  entryId: string;
  accountId: string;
  type: LedgerEntryType;
  /** ISO time the event was decided. */
  at: string;
  /** Global position as a decimal string (sorts with `seq`). */
  position: string;
  /** Global position as a number for sorting and paging. */
  seq: number;
  taskId: string | null;
  reservationId: string | null;
  model: string | null;
  /** Signed effect on the balance (credits +, charges and debits −; reservations 0). */
  balanceDelta: number;
  /** Signed effect on the reserved amount. */
  reservedDelta: number;
  amount: number;
  basis: PriceBasis | null;
  /** Settlements: the units the upstream claimed when more than were asked for (not charged). */
  deliveredUnits: number | null;
  note: string | null;
}

const handled = ['QuotaCredited', 'QuotaReserved', 'QuotaSettled', 'QuotaReleased', 'QuotaDebited'] as const;

export const ledgerProjection: Projection<LedgerEntry> = {
  name: 'ledger',
  view: VIEWS.ledger,
  handles: handled,
  documentId: (e) => e.id,
  evolve(doc, e) {
    if (doc) return undefined;
    const base = {
      entryId: e.id,
      accountId: e.streamName.slice('account-'.length),
      at: e.metadata.at,
      position: e.position.toString(),
      seq: Number(e.position),
    };
    switch (e.type) {
      case 'QuotaCredited':
        return {
          ...base,
          type: e.type,
          taskId: null,
          reservationId: null,
          model: null,
          balanceDelta: e.data.amount,
          reservedDelta: 0,
          amount: e.data.amount,
          basis: null,
          deliveredUnits: null,
          note: e.data.note,
        };
      case 'QuotaReserved':
        return {
          ...base,
          type: e.type,
          taskId: e.data.taskId,
          reservationId: e.data.reservationId,
          model: e.data.model,
          balanceDelta: 0,
          reservedDelta: e.data.amount,
          amount: e.data.amount,
          basis: e.data.basis,
          deliveredUnits: null,
          note: null,
        };
      case 'QuotaSettled':
        return {
          ...base,
          type: e.type,
          taskId: e.data.taskId,
          reservationId: e.data.reservationId,
          model: e.data.basis?.model ?? null,
          balanceDelta: -e.data.charged,
          reservedDelta: -e.data.reserved,
          amount: e.data.charged,
          basis: e.data.basis ?? null,
          deliveredUnits: e.data.deliveredUnits ?? null,
          note: settlementNote(e.data),
        };
      case 'QuotaReleased':
        return {
          ...base,
          type: e.type,
          taskId: e.data.taskId,
          reservationId: e.data.reservationId,
          model: null,
          balanceDelta: 0,
          reservedDelta: -e.data.amount,
          amount: e.data.amount,
          basis: null,
          deliveredUnits: null,
          note: e.data.reason,
        };
      case 'QuotaDebited':
        return {
          ...base,
          type: e.type,
          taskId: e.data.taskId ?? null,
          reservationId: null,
          model: null,
          balanceDelta: -e.data.amount,
          reservedDelta: 0,
          amount: e.data.amount,
          basis: null,
          deliveredUnits: null,
          note: e.data.reason,
        };
      default:
        return undefined;
    }
  },
};

/** Why a settlement differs from its basis: a charge capped by the balance, units over-delivered. */
function settlementNote(data: { actual: number; charged: number; deliveredUnits?: number | undefined; basis?: PriceBasis | undefined }): string | null {
  const notes: string[] = [];
  if (data.deliveredUnits !== undefined) {
    const asked = data.basis?.units ?? 0;
    notes.push(`upstream delivered ${data.deliveredUnits} × ${data.basis?.unit ?? 'unit'} where ${asked} were asked for; charged for ${asked}`);
  }
  if (data.actual !== data.charged) notes.push(`actual cost ${data.actual}, capped to ${data.charged}`);
  return notes.length > 0 ? notes.join('; ') : null;
}
