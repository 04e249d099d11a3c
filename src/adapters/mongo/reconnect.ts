/**
 * The `mongodb` driver (7.x) connects a MongoClient on its first operation. When that connection
 * fails (the server not up yet, or unreachable), it closes the topology it made but keeps it,
 * and every later operation fails with MongoTopologyClosedError, even once the server is back
 * (mongo_client.js `_connect`, operations/execute_operation.js `autoConnect`): a gateway started
 * before its MongoDB would never recover. `connect()` does make a new topology when the one held
 * is not connected, so a store calls it before its next operation after any topology close it
 * did not ask for.
 */
import type { MongoClient } from 'mongodb';
import { aroundEachMethod } from '../translate-rejections.js';

/** `store` with every method but `close` preceded by a new connection when the client's topology was closed under it. */
export function reconnectingAfterClose<T extends object>(store: T, client: MongoClient): T {
  let closedUnder = false;
  let closing = false;
  client.on('topologyClosed', () => {
    if (!closing) closedUnder = true;
  });
  return aroundEachMethod(store, async (name, call) => {
    if (name === 'close') {
      closing = true;
      return call();
    }
    if (closedUnder) {
      // Cleared first: a connection that fails closes the topology again and sets it again.
      closedUnder = false;
      await client.connect();
    }
    return call();
  });
}
