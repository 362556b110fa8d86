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
  /**
   * Freezes when the client next sends `text`, before that message reaches the database;
   * resolves then. A frozen moment chosen by what the client does, not by a timer.
   */
  freezeAtNext(text: string): Promise<void>;
  /**
   * The connection on which the client next sends `text` stops relaying for good, as one
   * the network lost without a word does; the others go on. Resolves then.
   */
  stallAtNext(text: string): Promise<void>;
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
  /** What was read while frozen (the trap's message, or a chunk read as the pause began): sent on thaw. */
  const held: Array<[Socket, Buffer]> = [];
  let trap: { text: string; sprung: () => void } | null = null;
  let stallTrap: { text: string; sprung: () => void } | null = null;
  /** The sockets of stalled connections: never resumed, and what they read is dropped. */
  const stalled = new WeakSet<Socket>();
  const freeze = () => {
    frozen = true;
    for (const socket of sockets) socket.pause();
  };
  const forward = (from: Socket, to: Socket, fromClient: boolean) => {
    sockets.add(from);
    from.on('data', (chunk: Buffer) => {
      if (fromClient && stallTrap !== null && chunk.includes(stallTrap.text)) {
        const { sprung } = stallTrap;
        stallTrap = null;
        for (const socket of [from, to]) {
          stalled.add(socket);
          socket.pause();
        }
        sprung();
      }
      if (stalled.has(from)) return;
      if (fromClient && trap !== null && chunk.includes(trap.text)) {
        const { sprung } = trap;
        trap = null;
        freeze();
        sprung();
      }
      if (frozen) held.push([to, chunk]);
      else to.write(chunk);
    });
    from.on('error', () => to.destroy());
    from.on('close', () => {
      sockets.delete(from);
      to.destroy();
    });
    if (frozen) from.pause();
  };
  const relayConnection = (client: Socket) => {
    const upstream = connect(Number(target.port), target.hostname);
    forward(client, upstream, true);
    forward(upstream, client, false);
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
    freeze,
    freezeAtNext: (text) => new Promise<void>((sprung) => (trap = { text, sprung })),
    stallAtNext: (text) => new Promise<void>((sprung) => (stallTrap = { text, sprung })),
    thaw() {
      frozen = false;
      for (const [to, chunk] of held.splice(0)) if (!stalled.has(to)) to.write(chunk);
      for (const socket of sockets) if (!stalled.has(socket)) socket.resume();
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
