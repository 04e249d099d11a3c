import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

/** Reservations not yet settled or released; the reconciler looks for stale ones here. */
export interface OpenReservationDoc {
  reservationId: string;
  accountId: string;
  taskId: string;
  amount: number;
  /** ISO time of the reservation. */
  at: string;
}

export const openReservationsProjection: Projection<OpenReservationDoc> = {
  name: 'open-reservations',
  view: VIEWS.openReservations,
  handles: ['QuotaReserved', 'QuotaSettled', 'QuotaReleased'],
  documentId: (e) => (e.type === 'QuotaReserved' || e.type === 'QuotaSettled' || e.type === 'QuotaReleased' ? e.data.reservationId : undefined),
  evolve(doc, e) {
    if (e.type === 'QuotaReserved') {
      if (doc) return undefined;
      const { reservationId, taskId, amount } = e.data;
      return { reservationId, taskId, amount, accountId: e.streamName.slice('account-'.length), at: e.metadata.at };
    }
    return doc ? null : undefined;
  },
};
