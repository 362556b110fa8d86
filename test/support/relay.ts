import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of a database that can stop relaying while every connection stays
 * open: what a frozen server, or a network that silently drops packets, looks like to a
 * client. Connections made while frozen are accepted and wait too. Or it can go away
 * altogether, as a pooler that stopped does: every connection ends and new ones are
 * refused until it is back, on the same port.
 */
export interface Relay {
  port: number;
  freeze(): void;
  thaw(): void;
  /** Ends every connection and refuses new ones (ECONNREFUSED), until restore(). */
  cut(): Promise<void>;
  isCut(): boolean;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const relayConnection = (client: Socket) => {
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
  };
  const listen = (port: number) =>
    new Promise<Server>((resolve) => {
      const server = createServer(relayConnection);
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
  const stop = (server: Server) =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  let server = await listen(0);
  let cut = false;
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    freeze() {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    thaw() {
      frozen = false;
      for (const socket of sockets) socket.resume();
    },
    cut: async () => {
      cut = true;
      await stop(server);
    },
    isCut: () => cut,
    restore: async () => {
      server = await listen(port);
      cut = false;
    },
    close: () => (cut ? Promise.resolve() : stop(server)),
  };
}
