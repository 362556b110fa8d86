import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay in front of a database that can stop relaying while every connection stays
 * open: what a frozen server, or a network that silently drops packets, looks like to a
 * client. Connections made while frozen are accepted and wait too.
 */
export interface Relay {
  port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ]) {
      sockets.add(from);
      from.on('data', (chunk) => to.write(chunk));
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
      if (frozen) from.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    freeze() {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    thaw() {
      frozen = false;
      for (const socket of sockets) socket.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
