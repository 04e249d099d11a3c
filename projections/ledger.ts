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
  /**
   * The API key the reservation was made with (reservations, settlements and releases that
   * carry it); null for credits, debits and submits without a key. Absent on documents projected
   * before it existed: read as null.
   */
  tokenId?: string | null;
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
    // Every entry has every field, in this order; each type sets what it carries.
    const entry = (type: LedgerEntryType, amount: number, fields: Partial<LedgerEntry>): LedgerEntry => ({
      entryId: e.id,
      accountId: e.streamName.slice('account-'.length),
      at: e.metadata.at,
      position: e.position.toString(),
      seq: Number(e.position),
      type,
      taskId: null,
      reservationId: null,
      model: null,
      tokenId: null,
      balanceDelta: 0,
      reservedDelta: 0,
      amount,
      basis: null,
      deliveredUnits: null,
      note: null,
      ...fields,
    });
    switch (e.type) {
      case 'QuotaCredited':
        return entry(e.type, e.data.amount, { balanceDelta: e.data.amount, note: e.data.note });
      case 'QuotaReserved': {
        const { taskId, reservationId, model, amount, basis, tokenId } = e.data;
        return entry(e.type, amount, { taskId, reservationId, model, tokenId: tokenId ?? null, reservedDelta: amount, basis });
      }
      case 'QuotaSettled':
        return entry(e.type, e.data.charged, {
          taskId: e.data.taskId,
          reservationId: e.data.reservationId,
          model: e.data.basis?.model ?? null,
          tokenId: e.data.tokenId ?? null,
          balanceDelta: -e.data.charged,
          reservedDelta: -e.data.reserved,
          basis: e.data.basis ?? null,
          deliveredUnits: e.data.deliveredUnits ?? null,
          note: settlementNote(e.data),
        });
      case 'QuotaReleased':
        // The release does not name the model: the statement takes it from the reservation's entry.
        return entry(e.type, e.data.amount, {
          taskId: e.data.taskId,
          reservationId: e.data.reservationId,
          tokenId: e.data.tokenId ?? null,
          reservedDelta: -e.data.amount,
          note: e.data.reason,
        });
      case 'QuotaDebited':
        return entry(e.type, e.data.amount, { taskId: e.data.taskId ?? null, balanceDelta: -e.data.amount, note: e.data.reason });
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
