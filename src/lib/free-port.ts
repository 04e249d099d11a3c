import { createServer } from 'node:net';

/**
 * Ports this process has handed out lately. The OS may offer a port again as soon as it is
 * released, before whoever asked for it has bound it: two children started together were once
 * given the same port (a worker answered on the API's address). At most the last 1,000 are kept.
 */
const handedOut = new Set<number>();
const REMEMBERED = 1000;

/** A loopback port free at the time of asking (the OS picks it), and not one this process handed out lately. */
export async function freePort(): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await portTheOsOffers();
    if (handedOut.has(port) && attempt < 50) continue;
    handedOut.add(port);
    if (handedOut.size > REMEMBERED) handedOut.delete(handedOut.values().next().value!);
    return port;
  }
}

function portTheOsOffers(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}
