import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';

/** A self-signed certificate for `commonName`, made by the machine's openssl. */
export function selfSignedCertificate(commonName: string): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kuko-tls-'));
  try {
    const made = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        `/CN=${commonName}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { encoding: 'utf8' },
    );
    if (made.status !== 0)
      throw new Error(`openssl could not make a certificate: ${made.error?.message ?? made.stderr}`);
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The first step of a PostgreSQL server that requires TLS: it answers the client's
 * SSLRequest with 'S' and starts TLS with `certificate`, nothing after that. Enough to
 * see what a client does with a certificate it refuses; `connections` counts the attempts.
 */
export async function startTlsOnlyServer(certificate: { cert: string; key: string }) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => {
      // The 8-byte SSLRequest: agree, then speak TLS on the same socket.
      socket.write('S', () => {
        const tls = new TLSSocket(socket, { isServer: true, ...certificate });
        tls.on('error', () => socket.destroy());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
