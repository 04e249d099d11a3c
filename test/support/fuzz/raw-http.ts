/**
 * Requests no HTTP client library sends: written to a socket as bytes (a body shorter than its
 * Content-Length, broken chunked encoding, a malformed header line), then the answer read until
 * the server closes or a second passes.
 */
import net from 'node:net';

export interface RawAnswer {
  status: number;
  body: unknown;
  text: string;
}

export function sendRaw(baseUrl: string, bytes: string, endAfterMs = 200): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const bodyText = rest.join('\r\n\r\n');
      let body: unknown;
      try {
        body = JSON.parse(bodyText);
      } catch {
        body = bodyText;
      }
      resolve({ status, body, text });
    };
    const timer = setTimeout(finish, endAfterMs + 1_000);
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(bytes);
    // Half-close: the server sees the end of what the client will ever send.
    setTimeout(() => socket.end(), endAfterMs);
  });
}

/** Malformed HTTP requests, each with the path its answer's error shape follows (if known). */
export function malformedHttp(key: string): Array<{ name: string; bytes: string }> {
  const auth = `Authorization: Bearer ${key}\r\n`;
  return [
    {
      name: 'a body shorter than its Content-Length',
      bytes: `POST /v1/videos HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`,
    },
    {
      name: 'a form shorter than its Content-Length',
      bytes: `POST /v1/images/edits HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000\r\n\r\n--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nab`,
    },
    {
      name: 'a bad chunk size',
      bytes: `POST /v1/videos HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    },
    {
      name: 'Content-Length and Transfer-Encoding',
      bytes: `POST /v1/videos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
    },
    { name: 'a negative Content-Length', bytes: `POST /v1/videos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}` },
    {
      name: 'a Content-Length beyond the body limit',
      bytes: `POST /v1/videos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{}`,
    },
    { name: 'a header line without a colon', bytes: `GET /v1/models HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n` },
    { name: 'a request line that is not one', bytes: 'HELLO\r\n\r\n' },
    { name: 'headers over 16 KiB', bytes: `GET /api/user/self HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n` },
    { name: 'a path with a bad percent-encoding', bytes: `GET /v1/videos/%E0%A4%A HTTP/1.1\r\nHost: x\r\n${auth}\r\n` },
  ];
}
